#pragma once
namespace demo {

inline void Dispatcher::boxed(int op) {  // line 4: the body, in the companion
}

}  // namespace demo
