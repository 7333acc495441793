// Private arrays indexed by data: clang keeps them in scratch (dword, short and byte elements).
extern "C" __attribute__((global)) void private_arrays(const unsigned *idx, const unsigned *in, unsigned *out) {
  unsigned t = __builtin_amdgcn_workitem_id_x() + __builtin_amdgcn_workgroup_id_x() * 64;
  unsigned a[96];
  unsigned short h[80];
  unsigned char b[72];
  for (int i = 0; i < 96; ++i) a[i] = in[t * 16 + (i & 15)] * (i + 1);
  for (int i = 0; i < 80; ++i) h[i] = (unsigned short)(in[t * 16 + (i & 15)] >> (i & 7));
  for (int i = 0; i < 72; ++i) b[i] = (unsigned char)(in[t * 16 + (i & 15)] >> (i & 15));
  unsigned s = 0;
  for (int i = 0; i < 16; ++i) {
    unsigned k = idx[t * 16 + i];
    s = s * 3u + a[k % 96u] + h[k % 80u] * 7u + b[k % 72u];
    a[(k >> 8) % 96u] = s;
    h[(k >> 12) % 80u] = (unsigned short)s;
    b[(k >> 16) % 72u] = (unsigned char)(s >> 3);
  }
  out[t] = s ^ a[idx[t * 16] % 96u] ^ ((unsigned)h[idx[t * 16 + 1] % 80u] << 8) ^ b[idx[t * 16 + 2] % 72u];
}
