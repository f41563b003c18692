// Umbrella header for the system library; the module map points here. OpenSSL's libcrypto, for SHA-256 only:
// it uses the processor's SHA instructions where there are some.
#pragma once
#include <openssl/sha.h>
#include <openssl/evp.h>
