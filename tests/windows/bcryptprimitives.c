/* A test-only bcryptprimitives.dll for Debian's wine 8.0, which has none.
 *
 * Go's Windows runtime (Go 1.24 and later) loads bcryptprimitives.dll from
 * System32 at start and takes its random bytes from ProcessPrng; without the
 * DLL a Go executable dies before main ("fatal error: bcryptprimitives.dll
 * not found"). Windows 10 and later ship the DLL, and wine 9 does too, so
 * users never need this: the tests build it with mingw and copy it into the
 * throwaway wine prefix's system32 (docs/testing.md). ProcessPrng here fills
 * the buffer from RtlGenRandom (advapi32's SystemFunction036), which wine 8.0
 * implements over the host's random source. It never ships in a release. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length); /* RtlGenRandom */

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
	while (len > 0) {
		ULONG n = len > 0x40000000 ? 0x40000000 : (ULONG)len;
		if (!SystemFunction036(data, n))
			return FALSE;
		data += n;
		len -= n;
	}
	return TRUE;
}
