import { createHash, randomBytes } from 'node:crypto';

/**
 * 32 random bytes, base64url (43 characters): a `state` (RFC 6749 section
 * 10.10: "the probability of an attacker guessing generated tokens ... MUST
 * be less than or equal to 2^(-128)"), a `nonce` (OpenID Connect Core 1.0
 * section 15.5.2) or a PKCE verifier (RFC 7636 section 4.1: 43 to 128
 * characters of the unreserved set).
 */
export const randomToken = (): string => randomBytes(32).toString('base64url');

/** RFC 7636 section 4.2: `code_challenge = BASE64URL(SHA256(ASCII(code_verifier)))`. */
export const s256Challenge = (verifier: string): string =>
  createHash('sha256').update(verifier, 'ascii').digest('base64url');
