//===- OptionFields.h - Every field of an options struct, once --*- C++ -*-===//
//
// A stage's cache key is derived from the fields of the options it runs with,
// never listed by hand (docs/cache.md#keys). Each options struct lists all of
// its fields once, in a static `fields()`: for each, the stages whose keys it
// enters, or why it enters none. Next to the struct,
//
//   static_assert(listsEveryFieldOnce<PTXOptions>(), "...");
//
// fails the build when the struct gains a field that the list lacks: C++17
// has no reflection, so the fields are counted the way boost::pfr counts them,
// as the most initializers the aggregate accepts.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_SUPPORT_OPTIONFIELDS_H
#define TILEC_SUPPORT_OPTIONFIELDS_H

#include <cstddef>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

namespace tilec {

/// The stages of a compile, in pipeline order (rt::kCacheStages names them).
enum class Stage : unsigned { TTIR, TTGIR, LLIR, PTX, Cubin };

/// The stages whose artifacts a field can change.
class StageSet {
public:
  constexpr StageSet() = default;
  constexpr StageSet(Stage stage) : bits(1u << unsigned(stage)) {}
  constexpr StageSet operator|(StageSet other) const {
    StageSet result;
    result.bits = bits | other.bits;
    return result;
  }
  constexpr bool contains(Stage stage) const {
    return bits & (1u << unsigned(stage));
  }
  constexpr bool empty() const { return bits == 0; }

private:
  unsigned bits = 0;
};

constexpr StageSet operator|(Stage a, Stage b) { return StageSet(a) | b; }

enum class FieldKind {
  /// The key holds the field's value.
  Keyed,
  /// The key holds what the field selects (e.g. the hash of the file a path
  /// names), so that an unset field and one naming the default key alike.
  Derived,
  /// No key holds the field: it changes no artifact.
  Excluded,
};

/// One field of `Options`. The kind is part of the type so that a key
/// builder never needs to serialize the type of a field it leaves out.
template <class Options, class T, FieldKind Kind> struct OptionField {
  static constexpr FieldKind kind = Kind;
  /// The field's name in keys (snake_case, as in the json).
  const char *name;
  T Options::*member;
  /// Keyed, Derived: the stages whose keys hold the field.
  StageSet stages;
  /// Derived: the value keys hold. An empty result means the stage cannot be
  /// keyed (e.g. no ptxas to identify) and runs uncached.
  std::string (*derive)(const Options &);
  /// Excluded: why the field changes no artifact.
  const char *reason;
};

template <class Options, class T>
constexpr OptionField<Options, T, FieldKind::Keyed>
keyedField(const char *name, T Options::*member, StageSet stages) {
  return {name, member, stages, nullptr, nullptr};
}

template <class Options, class T>
constexpr OptionField<Options, T, FieldKind::Derived>
derivedField(const char *name, T Options::*member, StageSet stages,
             std::string (*derive)(const Options &)) {
  return {name, member, stages, derive, nullptr};
}

template <class Options, class T>
constexpr OptionField<Options, T, FieldKind::Excluded>
excludedField(const char *name, T Options::*member, const char *reason) {
  return {name, member, StageSet(), nullptr, reason};
}

/// Calls `visit(field)` for each entry of `Options::fields()`, in order.
template <class Options, class Visit> void forEachField(Visit &&visit) {
  std::apply([&](const auto &...field) { (visit(field), ...); },
             Options::fields());
}

namespace detail {
/// Converts to any type, so that `T{AnyField{}, ...}` compiles for as many
/// initializers as the aggregate T has fields, and no more. Only used
/// unevaluated.
struct AnyField {
  template <class T> operator T() const;
};

template <class T, class Indices, class = void>
struct BracedFrom : std::false_type {};
template <class T, std::size_t... I>
struct BracedFrom<T, std::index_sequence<I...>,
                  std::void_t<decltype(T{(void(I), AnyField{})...})>>
    : std::true_type {};

template <class A, class B> constexpr bool sameMember(const A &a, const B &b) {
  if constexpr (std::is_same_v<decltype(a.member), decltype(b.member)>)
    return a.member == b.member;
  else
    return false;
}

/// How many entries of `fields` name the member that `field` names.
template <class Field, class Fields>
constexpr std::size_t countSameMember(const Field &field,
                                      const Fields &fields) {
  return std::apply(
      [&](const auto &...other) {
        return (std::size_t(0) + ... + std::size_t(sameMember(field, other)));
      },
      fields);
}
} // namespace detail

/// The number of fields of the aggregate T (without base classes).
template <class T, std::size_t N = 0> constexpr std::size_t countFields() {
  static_assert(std::is_aggregate_v<T>, "fields are counted in aggregates");
  if constexpr (detail::BracedFrom<T, std::make_index_sequence<N + 1>>::value)
    return countFields<T, N + 1>();
  else
    return N;
}

/// Whether `Options::fields()` names every field of Options, each once.
template <class Options> constexpr bool listsEveryFieldOnce() {
  constexpr auto fields = Options::fields();
  constexpr std::size_t size = std::tuple_size_v<decltype(fields)>;
  // Each entry names the same member as itself and no other.
  std::size_t matches = std::apply(
      [&](const auto &...field) {
        return (std::size_t(0) + ... + detail::countSameMember(field, fields));
      },
      fields);
  return size == countFields<Options>() && matches == size;
}

} // namespace tilec

#endif // TILEC_SUPPORT_OPTIONFIELDS_H
