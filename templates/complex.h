// ---- complex types (Tensile's ComplexFloat/ComplexDouble: real then imaginary part), in plain C++ for HIP and
// CUDA alike; the arithmetic is Tensile's, in its order (KernelWriterSource: TYPE_MAC, TYPE_MAC_WRITE)
template <typename T>
struct complex_t {
    T re, im;
    complex_t() = default;
    __device__ constexpr complex_t(int zero) : re(T(zero)), im(T(0)) {}
    __device__ constexpr complex_t(T r, T i) : re(r), im(i) {}
};
typedef complex_t<float> complex_f;
typedef complex_t<double> complex_d;
template <typename T> __device__ inline bool operator==(complex_t<T> a, complex_t<T> b) { return a.re == b.re && a.im == b.im; }
template <typename T> __device__ inline bool operator!=(complex_t<T> a, complex_t<T> b) { return !(a == b); }
template <typename T> __device__ inline complex_t<T> conjugate(complex_t<T> a) { return complex_t<T>(a.re, -a.im); }
// the LocalSplitU reduction: part by part
template <typename T> __device__ inline complex_t<T>& operator+=(complex_t<T>& a, complex_t<T> b) {
    a.re += b.re;
    a.im += b.im;
    return a;
}
// dst + a*b: four real multiply-adds, real part first (TYPE_MAC)
template <typename T> __device__ inline complex_t<T> multiply_add(complex_t<T> a, complex_t<T> b, complex_t<T> dst) {
    dst.re = multiply_add(a.re, b.re, dst.re);
    dst.re = multiply_add(-a.im, b.im, dst.re);
    dst.im = multiply_add(a.re, b.im, dst.im);
    dst.im = multiply_add(a.im, b.re, dst.im);
    return dst;
}
// alpha * reg (TYPE_MAC_WRITE step 1): each part multiplied by alpha's real part, then alpha's imaginary part added in
template <typename T> __device__ inline complex_t<T> operator*(complex_t<T> alpha, complex_t<T> reg) {
    const T re = reg.re;
    reg.re *= alpha.re;
    reg.re = multiply_add(-alpha.im, reg.im, reg.re);
    reg.im *= alpha.re;
    reg.im = multiply_add(alpha.im, re, reg.im);
    return reg;
}
// reg + beta * c (TYPE_MAC_WRITE step 2): beta's real part, then its imaginary part, each skipped when 0
template <typename T> __device__ inline complex_t<T> add_scaled(complex_t<T> reg, complex_t<T> beta, complex_t<T> c) {
    if (beta.re != T(0)) {
        reg.re = multiply_add(beta.re, c.re, reg.re);
        reg.im = multiply_add(beta.re, c.im, reg.im);
    }
    if (beta.im != T(0)) {
        reg.re = multiply_add(-beta.im, c.im, reg.re);
        reg.im = multiply_add(beta.im, c.re, reg.im);
    }
    return reg;
}
