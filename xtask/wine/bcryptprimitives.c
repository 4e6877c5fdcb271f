/* ProcessPrng, the one function of bcryptprimitives.dll that Rust's standard library
 * imports (for its random hash seeds). Wine 8 (Debian 12's) has no bcryptprimitives.dll,
 * so every Rust program built for Windows fails to start under it; the Wine step of
 * `cargo xtask test` puts this stand-in into its own Wine prefix. It fills the buffer from
 * RtlGenRandom (advapi32's SystemFunction036), which Wine implements. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T size)
{
    while (size > 0) {
        ULONG chunk = size > 0x10000000 ? 0x10000000 : (ULONG)size;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        size -= chunk;
    }
    return TRUE;
}
