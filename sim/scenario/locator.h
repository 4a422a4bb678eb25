// Maps fields of a parsed scenario message back to file:line:col, using the
// location tree the protobuf text-format parser fills in. The loader and the
// network kinds' scenario rules (world/network_kinds.h) name fields by it.
#pragma once
#include <google/protobuf/descriptor.h>
#include <google/protobuf/text_format.h>

#include <string>
#include <string_view>

#include "scenario/loader.h"

namespace nicsim {

class Locator {
 public:
  using Tree = google::protobuf::TextFormat::ParseInfoTree;

  // `self` is where this message starts (its field name in the parent);
  // it is also the answer for fields the file did not write.
  Locator(const std::string* file, const google::protobuf::Descriptor* type, const Tree* tree, SourceLoc self)
      : file_(file), type_(type), tree_(tree), self_(std::move(self)) {}

  const SourceLoc& self() const { return self_; }

  // Where field `name` (element `index` if repeated) was written.
  SourceLoc at(std::string_view name, int index = 0) const {
    const google::protobuf::FieldDescriptor* f = field(name);
    if (!f || !tree_) return self_;
    auto loc = tree_->GetLocation(f, f->is_repeated() ? index : -1);
    if (loc.line < 0) return self_;
    return {*file_, loc.line + 1, loc.column + 1};
  }

  // Whether the file wrote field `name` (element `index` if repeated): in
  // proto3 an empty string written reads as one not written.
  bool written(std::string_view name, int index = 0) const {
    const google::protobuf::FieldDescriptor* f = field(name);
    return f && tree_ && tree_->GetLocation(f, f->is_repeated() ? index : -1).line >= 0;
  }

  // The nested message in field `name` (element `index` if repeated).
  Locator in(std::string_view name, int index = 0) const {
    const google::protobuf::FieldDescriptor* f = field(name);
    const Tree* nested = nullptr;
    if (f && tree_) nested = tree_->GetTreeForNested(f, f->is_repeated() ? index : -1);
    return Locator(file_, f ? f->message_type() : nullptr, nested, at(name, index));
  }

 private:
  const google::protobuf::FieldDescriptor* field(std::string_view name) const {
    return type_ ? type_->FindFieldByName(std::string(name)) : nullptr;
  }

  const std::string* file_;
  const google::protobuf::Descriptor* type_;
  const Tree* tree_;
  SourceLoc self_;
};

}  // namespace nicsim
