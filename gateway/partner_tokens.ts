import { createRemoteJWKSet, errors, type JWTPayload, jwtVerify } from "jose";

export interface PartnerTokenSettings {
  jwksUrl: string;
  issuer: string;
  audience: string;
}

/** Outcome of checking a bearer token; failures carry a reason safe to show the caller. */
export type TokenCheck =
  | { ok: true; payload: JWTPayload }
  | { ok: false; reason: string; providerDown?: boolean };

/** Asymmetric algorithms only: a shared-secret (HS*) token could be forged from the JWKS. */
const ALGORITHMS = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "EdDSA",
];

/**
 * Verifies partner access tokens against the identity provider's JWKS. jose caches the key set,
 * refetches it when a token names an unknown `kid`, and never more often than the cooldown, so a
 * flood of tokens with made-up key ids cannot hammer the provider.
 */
export function createPartnerTokenVerifier(
  settings: PartnerTokenSettings,
  options: { cooldownMs?: number; cacheMaxAgeMs?: number; timeoutMs?: number } = {},
): (token: string) => Promise<TokenCheck> {
  const jwks = createRemoteJWKSet(new URL(settings.jwksUrl), {
    cooldownDuration: options.cooldownMs ?? 30_000,
    cacheMaxAge: options.cacheMaxAgeMs ?? 10 * 60_000,
    timeoutDuration: options.timeoutMs ?? 5_000,
  });
  return async (token) => {
    try {
      const { payload } = await jwtVerify(token, jwks, {
        issuer: settings.issuer,
        audience: settings.audience,
        algorithms: ALGORITHMS,
        clockTolerance: 5,
        requiredClaims: ["exp"],
      });
      return { ok: true, payload };
    } catch (error) {
      return { ok: false, ...describe(error) };
    }
  };
}

function describe(error: unknown): { reason: string; providerDown?: boolean } {
  if (error instanceof errors.JWTExpired) return { reason: "the token has expired" };
  if (error instanceof errors.JWTClaimValidationFailed) {
    return { reason: `the token's "${error.claim}" claim is not accepted` };
  }
  if (error instanceof errors.JWKSNoMatchingKey) {
    return { reason: "the token's signing key is unknown" };
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) {
    return { reason: "the token's signature does not verify" };
  }
  if (error instanceof errors.JOSEAlgNotAllowed) {
    return { reason: "the token's algorithm is not accepted" };
  }
  if (error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid) {
    return { reason: "the identity provider's keys are unavailable", providerDown: true };
  }
  if (error instanceof errors.JOSEError) return { reason: "the token is malformed or invalid" };
  // A network failure while fetching the key set.
  return { reason: "the identity provider's keys are unavailable", providerDown: true };
}
