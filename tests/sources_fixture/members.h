#pragma once
namespace demo {

class Allocator {
 public:
  virtual void* raw_alloc(size_t nbytes) = 0;
  virtual void record(int stream) = 0;
  int handle(int x) const;
  int inline_body() const {
    return handle(1);
  }
  struct Nested {
    int f();
  };
};

class Dispatcher {
 public:
  template <class Return>
  Return call(int op) const;
  void redispatch(int key);
  void boxed(int op);
};

class Other {
 public:
  int handle(int x) const { return x; }  // line 27: another class's member of the same name
};

inline void* raw_alloc(size_t nbytes) {  // line 30: the free function
  return nullptr;
}

template <class Return>
inline Return Dispatcher::call(int op) const {  // line 35
  return Return();
}

inline void Dispatcher::redispatch(int key) {}  // line 39

inline int Allocator::Nested::f() { return 0; }  // line 41
using Handle = int;  // line 42

}  // namespace demo
