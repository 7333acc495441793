// A call that is not inlined, with its own private array on the stack (s32 frames), from a kernel with a private array.
__attribute__((noinline, device)) unsigned mix(const unsigned *in, unsigned k, unsigned seed) {
  unsigned t[40];
  for (int i = 0; i < 40; ++i) t[i] = in[i & 15] * (i + 3) + seed;
  unsigned s = seed;
  for (int i = 0; i < 8; ++i) { s = s * 5u + t[(k >> (3 * i)) % 40u]; t[(s >> 4) % 40u] ^= s; }
  return s + t[k % 40u];
}

extern "C" __attribute__((global)) void calls(const unsigned *idx, const unsigned *in, unsigned *out) {
  unsigned t = __builtin_amdgcn_workitem_id_x() + __builtin_amdgcn_workgroup_id_x() * 64;
  unsigned a[24];
  for (int i = 0; i < 24; ++i) a[i] = in[t * 16 + (i & 15)] + i;
  unsigned s = mix(in + t * 16, idx[t * 4], 1u);
  a[s % 24u] = s;
  s = mix(in + t * 16, idx[t * 4 + 1] ^ a[idx[t * 4 + 2] % 24u], s);
  out[t] = s ^ a[idx[t * 4 + 3] % 24u];
}
