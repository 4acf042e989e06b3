// The C++ extension behind the dispatch probes (docs/dispatch/cpp-extension.md and
// docs/dispatch/backends.md). probes/dispatch/conftest.py compiles it once with
// torch.utils.cpp_extension.load_inline into _build/cpp-extensions/torch-<version>/dispatch_probe_ext/.
//
// It registers:
// - dispatch_probe_cpp::scale_add, with a CPU kernel that switches on the dtype
//   and a Meta kernel that only computes the output's shape;
// - dispatch_probe_cpp::twice, defined together with its kernel and no dispatch key;
// - an allocator, a device guard and four aten kernels for the PrivateUse1 backend:
//   a toy device whose memory is ordinary host memory.
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/EmptyTensor.h>
#include <c10/core/Allocator.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/library.h>

#include <cstdlib>
#include <cstring>

namespace {

void check_same(const at::Tensor& x, const at::Tensor& y) {
  TORCH_CHECK(x.sizes() == y.sizes() && x.scalar_type() == y.scalar_type(),
              "scale_add: x and y must have the same shape and dtype");
}

// out = x + alpha * y, element by element, for float and double only.
at::Tensor scale_add_cpu(const at::Tensor& x, const at::Tensor& y, double alpha) {
  check_same(x, y);
  at::Tensor a = x.contiguous();
  at::Tensor b = y.contiguous();
  at::Tensor out = at::empty_like(a);
  AT_DISPATCH_FLOATING_TYPES(a.scalar_type(), "scale_add_cpu", [&] {
    const scalar_t* pa = a.const_data_ptr<scalar_t>();
    const scalar_t* pb = b.const_data_ptr<scalar_t>();
    scalar_t* po = out.mutable_data_ptr<scalar_t>();
    for (int64_t i = 0; i < a.numel(); ++i) {
      po[i] = pa[i] + static_cast<scalar_t>(alpha) * pb[i];
    }
  });
  return out;
}

// Shape and dtype only: no data is read, so there is nothing to switch on.
at::Tensor scale_add_meta(const at::Tensor& x, const at::Tensor& y, double alpha) {
  check_same(x, y);
  return at::empty_like(x);
}

// Written in terms of other operators, so every backend and autograd can use it.
at::Tensor twice(const at::Tensor& x) {
  return x.add(x);
}

// ---- the toy device ----

void toy_free(void* p) {
  std::free(p);
}

struct ToyAllocator final : c10::Allocator {
  c10::DataPtr allocate(size_t n) override {
    void* p = n ? std::malloc(n) : nullptr;
    return {p, p, &toy_free, c10::Device(c10::DeviceType::PrivateUse1, 0)};
  }
  c10::DeleterFnPtr raw_deleter() const override {
    return &toy_free;
  }
  void copy_data(void* dst, const void* src, std::size_t n) const override {
    std::memcpy(dst, src, n);
  }
};

ToyAllocator toy_allocator;

at::Tensor toy_empty(c10::IntArrayRef size, std::optional<at::ScalarType> dtype,
                     std::optional<at::Layout>, std::optional<at::Device>, std::optional<bool>,
                     std::optional<at::MemoryFormat> memory_format) {
  return at::detail::empty_generic(size, &toy_allocator,
                                   c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
                                   c10::dtype_or_default(dtype), memory_format);
}

at::Tensor toy_empty_strided(c10::IntArrayRef size, c10::IntArrayRef stride,
                             std::optional<at::ScalarType> dtype, std::optional<at::Layout>,
                             std::optional<at::Device>, std::optional<bool>) {
  return at::detail::empty_strided_generic(size, stride, &toy_allocator,
                                           c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
                                           c10::dtype_or_default(dtype));
}

// copy_ hands copies it cannot do itself (a device it does not know) to _copy_from.
at::Tensor toy_copy_from(const at::Tensor& self, const at::Tensor& dst, bool) {
  TORCH_CHECK(self.is_contiguous() && dst.is_contiguous() &&
                  self.scalar_type() == dst.scalar_type() && self.numel() == dst.numel(),
              "toy device: only copies between contiguous tensors of one dtype and size");
  std::memcpy(dst.mutable_data_ptr(), self.const_data_ptr(), self.nbytes());
  return dst;
}

// The toy memory is host memory, so the arithmetic can borrow the CPU kernels.
at::Tensor host_view(const at::Tensor& t) {
  return at::from_blob(t.data_ptr(), t.sizes(), t.strides(), t.options().device(at::kCPU));
}

at::Tensor& toy_add_out(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha,
                        at::Tensor& out) {
  at::Tensor result = at::add(host_view(self), host_view(other), alpha);
  if (!out.sizes().equals(result.sizes())) {
    out.resize_(result.sizes());
  }
  host_view(out).copy_(result);
  return out;
}

}  // namespace

C10_REGISTER_GUARD_IMPL(PrivateUse1, c10::impl::NoOpDeviceGuardImpl<c10::DeviceType::PrivateUse1>);

TORCH_LIBRARY(dispatch_probe_cpp, m) {
  m.def("scale_add(Tensor x, Tensor y, float alpha) -> Tensor");
  m.def("twice(Tensor x) -> Tensor", &twice);
}

TORCH_LIBRARY_IMPL(dispatch_probe_cpp, CPU, m) {
  m.impl("scale_add", &scale_add_cpu);
}

TORCH_LIBRARY_IMPL(dispatch_probe_cpp, Meta, m) {
  m.impl("scale_add", &scale_add_meta);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("empty.memory_format", &toy_empty);
  m.impl("empty_strided", &toy_empty_strided);
  m.impl("_copy_from", &toy_copy_from);
  m.impl("add.out", &toy_add_out);
}
