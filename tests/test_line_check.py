"""The self-check: does a pinned line define its symbol, in the form its kind says?"""
import pytest

from verified.sources.line_check import problem


@pytest.mark.parametrize("text, symbol, kind, path", [
    ("struct C10_API TensorImpl : public c10::intrusive_ptr_target {", "TensorImpl", "definition", "c10/x.h"),
    ("#define TORCH_CHECK(cond, ...) \\", "TORCH_CHECK", "definition", "c10/x.h"),
    ("#define TORCH_WARN(...) _TORCH_WARN_WITH(::c10::UserWarning, __VA_ARGS__);", "TORCH_WARN", "definition", "c.h"),
    ("C10_ALWAYS_INLINE_UNLESS_MOBILE Return Dispatcher::call(", "Dispatcher::call", "definition", "d.h"),
    ("  int64_t storage_offset_ = 0;", "TensorImpl::storage_offset_", "definition", "c10/x.h"),
    ("  std::atomic<size_t> large_segment_size_{20971520}; // 20 MB", "A::large_segment_size_", "definition", "a.h"),
    ("  virtual void* raw_alloc(size_t nbytes) = 0;", "raw_alloc", "declaration", "c.h"),
    ("TORCH_API extern const char* ERR_BACKWARD_TWICE;", "ERR_BACKWARD_TWICE", "declaration", "s.h"),
    ("  Storage() = default;", "Storage::Storage", "definition", "s.h"),
    ("typedef struct VISIBILITY_HIDDEN ExtraState {", "ExtraState", "definition", "e.h"),
    ("using Stack = std::vector<IValue>;", "Stack", "definition", "stack.h"),
    ("def compile(", "compile", "definition", "torch/__init__.py"),
    ("    benchmark_limit = ContextProp(", "CudnnModule.benchmark_limit", "definition", "torch/b.py"),
    ("    __call__: Callable[..., Any] = _wrapped_call_impl", "Module.__call__", "definition", "m.py"),
    ("- func: add.out(Tensor self) -> Tensor(a!)", "add.out", "definition", "native_functions.yaml"),
    ('_lib = torch.library.Library("aten", "IMPL", "Meta")', "aten::add.Tensor@Meta", "registration", "m.py"),
])
def test_defining_lines_pass(text, symbol, kind, path):
    assert problem(text, symbol, kind, path) is None


@pytest.mark.parametrize("text, symbol, kind, path, why", [
    ("  return helper(x);", "helper", "definition", "a.h", "does not define 'helper'"),
    ("  x = make(raw_alloc(3));", "raw_alloc", "definition", "a.h", "does not define 'raw_alloc'"),
    ("  auto s = self->storage_offset_;", "storage_offset_", "definition", "a.h", "does not define"),
    ("// int commented_out();", "commented_out", "definition", "a.h", "does not define"),
    ("  virtual void* raw_alloc(size_t nbytes) = 0;", "raw_alloc", "definition", "c.h", "only declares 'raw_alloc'"),
    ("C10_API LocalDispatchKeySet tls_local_dispatch_key_set();", "tls_local_dispatch_key_set", "definition", "l.h",
     "only declares"),
    ("    return compile(x)", "compile", "definition", "torch/__init__.py", "does not define 'compile'"),
    ("- func: add.Tensor(Tensor self) -> Tensor", "add.out", "definition", "native_functions.yaml", "not the"),
    ("x = 1", "aten::add@Meta", "registration", "m.py", "not a library registration"),
])
def test_other_lines_fail(text, symbol, kind, path, why):
    assert why in problem(text, symbol, kind, path)
