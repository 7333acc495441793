__attribute__((noinline, device)) unsigned pick(unsigned *a, unsigned k) { a[k % 20u] += 3; return a[(k >> 5) % 20u]; }
extern "C" __attribute__((global)) void gen(const unsigned *idx, const unsigned *in, unsigned *out) {
  unsigned t = __builtin_amdgcn_workitem_id_x();
  unsigned a[20];
  for (int i = 0; i < 20; ++i) a[i] = in[t * 20 + i];
  out[t] = pick(a, idx[t]) + a[idx[t + 64] % 20u];
}
