#pragma once
// Branches a Linux x86-64 CPU build does and does not compile.
namespace demo {

#ifdef C10_MOBILE
constexpr int kAlignment = 16;  // mobile only
#else
constexpr int kAlignment = 64;  // line 8
#endif

#ifdef STANDALONE_TORCH_HEADER
#ifdef STRIP_ERROR_MESSAGES
#define CHECK_IT(cond) standalone_stripped(cond)
#else
#define CHECK_IT(cond) standalone(cond)
#endif
#else
#ifdef STRIP_ERROR_MESSAGES
#define CHECK_IT(cond) stripped(cond)
#else
#define CHECK_IT(cond) full(cond)  /* line 21 */
#endif
#endif

#if defined(_MSC_VER) || defined(C10_ANDROID)
int local_state();
#else
inline int local_state() {  // line 28
  return 1;
}
#endif

#if __has_include(<optional>)
inline int undecided() { return 1; }  // line 34: kept, the condition is not decided here
#else
inline int undecided() { return 2; }
#endif

#if defined(_WIN32)
inline int platform() { return 0; }
#elif defined(__APPLE__)
inline int platform() { return 1; }
#elif defined(__linux__)
inline int platform() { return 2; }  // line 44
#endif

/* a comment that mentions
int commented_out();
*/
int after_comment();  // line 50
const char* text = "int in_a_string();";

}  // namespace demo
