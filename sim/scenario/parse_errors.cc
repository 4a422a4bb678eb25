#include "scenario/parse_errors.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <string_view>
#include <vector>

#include <fmt/format.h>

namespace nicsim {

namespace {

int next_column(int column, char c) { return c == '\t' ? (column / 8 + 1) * 8 : column + 1; }

int visual_column(std::string_view line, std::size_t index) {
  int col = 0;
  for (std::size_t i = 0; i < index && i < line.size(); ++i) col = next_column(col, line[i]);
  return col;
}

// The parser reports field-level errors (unknown field, a non-repeated field
// given twice, two members of a oneof) at the token after the field name;
// people look for the name itself. When a word quoted in the message ends
// just before the reported column, point at the start of that word instead.
int field_error_column(const std::string& text, int line, int column, const std::string& message) {
  std::size_t start = 0;
  for (int l = 0; l < line && start != std::string::npos; ++l) {
    start = text.find('\n', start);
    if (start != std::string::npos) ++start;
  }
  if (start == std::string::npos) return column;
  std::string_view row(text);
  row = row.substr(start, std::min(row.find('\n', start), row.size()) - start);
  std::size_t end = 0;
  for (int col = 0; end < row.size() && col < column; ++end) col = next_column(col, row[end]);
  while (end > 0 && (row[end - 1] == ' ' || row[end - 1] == '\t')) --end;
  for (std::size_t q = message.find('"'); q != std::string::npos;) {
    std::size_t close = message.find('"', q + 1);
    if (close == std::string::npos) break;
    std::string_view word = std::string_view(message).substr(q + 1, close - q - 1);
    if (!word.empty() && word.size() <= end && row.substr(end - word.size(), word.size()) == word) {
      return visual_column(row, end - word.size());
    }
    q = message.find('"', close + 1);
  }
  return column;
}

struct Brace {
  int line = 0;
  int column = 0;
  std::string field;  // the name before it, empty when there is none
};

// Walks the text as the tokenizer does for brackets (comments and quoted
// strings hold none) and returns the braces still open at the end, or at the
// first closing brace that has no opening one, `stray`. A brace is named by
// the last identifier before it at its own depth: its field's name, also
// for the elements of a list (`node [ {...}, {...} ]`).
struct BraceScan {
  std::vector<Brace> open;
  std::optional<Brace> stray;
};

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

BraceScan scan_braces(std::string_view text) {
  BraceScan scan;
  std::vector<std::string> last_word(1);  // by depth
  int line = 0, column = 0;
  char quote = 0;
  bool comment = false;
  for (std::size_t i = 0; i < text.size() && !scan.stray; ++i) {
    const char c = text[i];
    if (c == '\n') {
      ++line, column = 0, comment = false;
      quote = 0;  // the tokenizer ends a string at the end of its line
      continue;
    }
    column = next_column(column, c);
    if (comment) continue;
    if (quote) {
      const bool escape = c == '\\' && i + 1 < text.size() && text[i + 1] != '\n';
      if (escape)
        column = next_column(column, text[++i]);
      else if (c == quote)
        quote = 0;
    } else if (word_char(c) && (i == 0 || !word_char(text[i - 1]))) {
      std::size_t end = i;
      while (end < text.size() && word_char(text[end])) ++end;
      // A number (1, 2.5e3, 0x1f) names nothing.
      if (!std::isdigit(static_cast<unsigned char>(c))) last_word.back() = std::string(text.substr(i, end - i));
    } else if (c == '#') {
      comment = true;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '{' || c == '<') {
      scan.open.push_back({line, column - 1, last_word.back()});
      last_word.emplace_back();
    } else if ((c == '}' || c == '>') && scan.open.empty()) {
      scan.stray = Brace{line, column - 1, {}};
    } else if (c == '}' || c == '>') {
      scan.open.pop_back();
      last_word.pop_back();
    }
  }
  return scan;
}

}  // namespace

ParseErrorPlace explain_parse_error(const std::string& text, const ParseErrorPlace& reported) {
  constexpr std::string_view kExpected = "Expected identifier, got: ";
  if (reported.message.starts_with(kExpected)) {
    const std::string_view got = std::string_view(reported.message).substr(kExpected.size());
    const BraceScan scan = scan_braces(text);
    if (got.empty() && !scan.open.empty()) {
      const Brace& b = scan.open.back();
      const std::string what = b.field.empty() ? std::string("this message") : "`" + b.field + "`";
      return {b.line, b.column,
              fmt::format("{} is not closed: the file ends before its closing brace ({} still open)", what,
                          scan.open.size())};
    }
    if ((got == "}" || got == ">") && scan.stray) {
      return {scan.stray->line, scan.stray->column,
              fmt::format("'{}' closes nothing: no message is open here (one closing brace too many?)", got)};
    }
  }
  return {reported.line, field_error_column(text, reported.line, reported.column, reported.message), reported.message};
}

}  // namespace nicsim
