// The text-format parser's first error, told as a person writing the file
// needs it: where the field name is rather than the token after it, and an
// unclosed or unopened brace named as such rather than "Expected identifier".
#pragma once
#include <string>

namespace nicsim {

// Lines and columns count from 0 as the protobuf tokenizer gives them (a tab
// advances to the next multiple of 8).
struct ParseErrorPlace {
  int line = 0;
  int column = 0;
  std::string message;
};

ParseErrorPlace explain_parse_error(const std::string& text, const ParseErrorPlace& reported);

}  // namespace nicsim
