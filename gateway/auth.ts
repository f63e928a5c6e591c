import { hash } from "node:crypto";
import type { Sql } from "@printshop/shared/db";
import { ApiError } from "@printshop/shared/http";
import { isUuid } from "@printshop/shared/ids";
import type { CredentialKind } from "@printshop/shared/internal-context";
import { hashSecret, parseApiKey, sameBytes } from "./domain/api_key.ts";
import { findActiveKey } from "./store/api_keys.ts";
import { findActivePartnerApp, findGrant } from "./store/partner_apps.ts";
import type { TokenCheck } from "./partner_tokens.ts";
import { FailedLookupLimiter } from "./failed_lookup_limiter.ts";
import { UNKNOWN_ADDRESS_GROUP } from "./domain/address_group.ts";

export interface Principal {
  organizationId: string;
  organizationName: string;
  credentialKind: CredentialKind;
  credentialId: string;
  scopes: string[];
  requestsPerMinute: number | null;
  /** What rate limits and idempotency keys are scoped to: a key, or an app for one organisation. */
  bucket: string;
}

/**
 * How long a resolved credential is remembered by one gateway process. A revoked key or grant
 * stops working within this time on every replica (at once on the replica that revoked it).
 */
export const AUTH_CACHE_TTL_MS = 2_000;
const AUTH_CACHE_MAX_ENTRIES = 10_000;

/**
 * How long a credential that authenticated stays known to this process: a known credential is
 * always looked up, whatever its address has failed, so a client keeps working while others
 * behind the same address (a proxy, an office) guess. A day covers any client that is in use;
 * only valid credentials are remembered, so no attacker can fill the entries, which are bounded
 * all the same.
 */
export const KNOWN_CREDENTIAL_TTL_MS = 24 * 60 * 60 * 1000;
const KNOWN_CREDENTIAL_MAX_ENTRIES = 100_000;

const TENANT_CHALLENGE = 'ApiKey realm="printshop", header="X-API-Key"';
const BEARER_CHALLENGE = 'Bearer realm="printshop"';
const INVALID_TOKEN_CHALLENGE = 'Bearer realm="printshop", error="invalid_token"';

function unauthenticated(message: string, challenge = TENANT_CHALLENGE): ApiError {
  return new ApiError("unauthenticated", message, undefined, { "WWW-Authenticate": challenge });
}

export interface AuthenticatorOptions {
  /** Verifies partner bearer tokens; absent when PARTNER_JWKS_URL is not configured. */
  verifyPartnerToken?: (token: string) => Promise<TokenCheck>;
  /** What failed look-ups cost each address group; by default FAILED_LOOKUP_POLICY's buckets. */
  failedLookups?: FailedLookupLimiter;
  now?: () => number;
}

/** The refusal of a look-up for an address group that has failed too often. */
function tooManyFailures(retryAfterSeconds: number): ApiError {
  return new ApiError(
    "rate_limited",
    "Too many failed credentials from this address; a credential not used here before is " +
      `checked again in ${retryAfterSeconds} s`,
    undefined,
    { "Retry-After": String(retryAfterSeconds) },
  );
}

/**
 * Fingerprints of credentials that authenticated, each for KNOWN_CREDENTIAL_TTL_MS, the
 * oldest forgotten first when there are too many (forgetting one only puts it back under its
 * address's limit).
 */
class KnownCredentials {
  #expiresAt = new Map<string, number>();

  constructor(private readonly now: () => number) {}

  has(fingerprint: string): boolean {
    const expiresAt = this.#expiresAt.get(fingerprint);
    if (expiresAt === undefined) return false;
    if (expiresAt > this.now()) return true;
    this.#expiresAt.delete(fingerprint);
    return false;
  }

  add(fingerprint: string): void {
    this.#expiresAt.delete(fingerprint);
    if (this.#expiresAt.size >= KNOWN_CREDENTIAL_MAX_ENTRIES) {
      this.#expiresAt.delete(this.#expiresAt.keys().next().value!);
    }
    this.#expiresAt.set(fingerprint, this.now() + KNOWN_CREDENTIAL_TTL_MS);
  }
}

/**
 * Resolves the caller of a request: a tenant key (X-API-Key alone) or a partner credential
 * (client id, client secret, bearer token and organisation). Every failure is a 401 whose message
 * says which part failed but never echoes the credential.
 *
 * Looking a secret up (a key, a partner's client id and secret) costs a database query, so a
 * look-up that fails costs the caller's address group a token of its failed look-ups
 * (domain/failed_lookups.ts); once they are spent, a credential this process does not know is
 * refused with 429 before any query. A credential that has authenticated here is known for a
 * day and always looked up, so guessing from an address never locks out a client behind it.
 */
export class Authenticator {
  #cache = new Map<string, { principal: Principal; expiresAt: number }>();
  #known: KnownCredentials;
  #failedLookups: FailedLookupLimiter;
  #now: () => number;

  constructor(private readonly sql: Sql, private readonly options: AuthenticatorOptions = {}) {
    this.#now = options.now ?? Date.now;
    this.#known = new KnownCredentials(this.#now);
    this.#failedLookups = options.failedLookups ?? new FailedLookupLimiter(undefined, this.#now);
  }

  /** Forgets every cached credential (after a revocation through this process's admin API). */
  forgetAll(): void {
    this.#cache.clear();
  }

  /**
   * `addressGroup` answers the caller's group (domain/address_group.ts), what its failures are
   * counted by; it is asked only when a credential is looked up, so a cached one costs nothing.
   */
  async authenticate(
    headers: Headers,
    addressGroup: () => string = () => UNKNOWN_ADDRESS_GROUP,
  ): Promise<Principal> {
    const cacheKey = credentialFingerprint(headers);
    const cached = this.#cache.get(cacheKey);
    if (cached && cached.expiresAt > this.#now()) return cached.principal;
    const group = addressGroup();
    const { principal, expiresAt } = headers.has("x-api-secret")
      ? await this.#partner(headers, group)
      : await this.#tenant(headers, group);
    if (this.#cache.size >= AUTH_CACHE_MAX_ENTRIES) {
      this.#cache.delete(this.#cache.keys().next().value!);
    }
    this.#cache.set(cacheKey, {
      principal,
      expiresAt: Math.min(expiresAt, this.#now() + AUTH_CACHE_TTL_MS),
    });
    return principal;
  }

  /**
   * Looks a secret up for `addressGroup`, answering what `find` found when `matches` accepts it
   * (the secret's hash is the stored one), else null. A credential not known here takes a token
   * of the group's failed look-ups first (429 when none is left) and gives it back when it
   * matches; a known one is looked up whatever the group has failed, and its failure (revoked
   * since) is no guess, so it costs nothing.
   */
  async #lookUp<T>(
    addressGroup: string,
    credential: string,
    find: () => Promise<T | null>,
    matches: (found: T) => boolean,
  ): Promise<T | null> {
    const fingerprint = hash("sha256", credential, "base64url");
    const known = this.#known.has(fingerprint);
    if (!known) {
      const retryAfter = this.#failedLookups.take(addressGroup);
      if (retryAfter !== null) throw tooManyFailures(retryAfter);
    }
    let found: T | null;
    try {
      found = await find();
    } catch (error) {
      // The database failed, not the credential.
      if (!known) this.#failedLookups.giveBack(addressGroup);
      throw error;
    }
    if (found === null || !matches(found)) return null;
    this.#known.add(fingerprint);
    if (!known) this.#failedLookups.giveBack(addressGroup);
    return found;
  }

  async #tenant(
    headers: Headers,
    addressGroup: string,
  ): Promise<{ principal: Principal; expiresAt: number }> {
    const apiKey = headers.get("x-api-key");
    const authorization = headers.get("authorization");
    if (authorization !== null) {
      // Named by its scheme only: the credential itself is never echoed.
      const scheme = authorization.trim().split(/\s+/)[0] ?? "";
      throw unauthenticated(
        /^bearer$/i.test(scheme)
          ? "A tenant API key must be sent in the X-API-Key header, not as an Authorization bearer token"
          : `The Authorization header takes only a partner's bearer token${
            /^[A-Za-z][\w-]{0,30}$/.test(scheme) ? ` (not "${scheme} …")` : ""
          }; send a tenant API key in the X-API-Key header`,
      );
    }
    if (!apiKey) throw unauthenticated("Missing credential: send your API key in X-API-Key");
    const parsed = parseApiKey(apiKey);
    // Hash even when the format is wrong, so timing does not tell well-formed keys apart.
    const hash = await hashSecret(parsed?.secret ?? apiKey);
    // A key that cannot be one (wrong shape) costs no look-up, so it counts as none.
    const key = parsed
      ? await this.#lookUp(
        addressGroup,
        `key\n${apiKey}`,
        () => findActiveKey(this.sql, parsed.lookup),
        (found) => sameBytes(hash, found.secretHash),
      )
      : null;
    if (!key) {
      throw unauthenticated("Invalid or revoked API key");
    }
    const principal: Principal = {
      organizationId: key.organizationId,
      organizationName: key.organizationName,
      credentialKind: "tenant_key",
      credentialId: key.id,
      scopes: key.scopes,
      requestsPerMinute: key.requestsPerMinute,
      bucket: `key:${key.id}`,
    };
    checkOrganizationHeader(principal, headers.get("x-service-organization-id"));
    return { principal, expiresAt: Infinity };
  }

  async #partner(
    headers: Headers,
    addressGroup: string,
  ): Promise<{ principal: Principal; expiresAt: number }> {
    const verify = this.options.verifyPartnerToken;
    if (!verify) {
      throw unauthenticated(
        "Partner credentials are not enabled on this gateway",
        BEARER_CHALLENGE,
      );
    }
    const clientId = headers.get("x-api-key");
    const clientSecret = headers.get("x-api-secret") ?? "";
    const authorization = headers.get("authorization") ?? "";
    // RFC 9110: the scheme name is case-insensitive.
    const token = authorization.match(/^Bearer +([A-Za-z0-9._~+/=-]+)$/i)?.[1];
    if (!clientId) {
      throw unauthenticated("A partner request needs its client id in X-API-Key", BEARER_CHALLENGE);
    }
    if (!token) {
      throw unauthenticated(
        "A partner request needs an access token in Authorization: Bearer",
        BEARER_CHALLENGE,
      );
    }
    const hash = await hashSecret(clientSecret);
    // The client id and secret are what is guessed; the token is checked by its signature alone.
    const app = await this.#lookUp(
      addressGroup,
      `partner\n${clientId}\n${clientSecret}`,
      () => findActivePartnerApp(this.sql, clientId),
      (found) => sameBytes(hash, found.secretHash),
    );
    if (!app) {
      throw unauthenticated("Invalid partner client id or secret", BEARER_CHALLENGE);
    }
    const check = await verify(token);
    if (!check.ok) {
      if (check.providerDown) {
        throw new ApiError(
          "service_unavailable",
          "Partner tokens cannot be verified right now: the identity provider's keys are unavailable",
          undefined,
          { "Retry-After": "5" },
        );
      }
      throw unauthenticated(`Invalid access token: ${check.reason}`, INVALID_TOKEN_CHALLENGE);
    }
    const tokenClient = check.payload.client_id ?? check.payload.azp;
    if (tokenClient !== clientId) {
      throw unauthenticated(
        "Invalid access token: it was issued to another client",
        INVALID_TOKEN_CHALLENGE,
      );
    }
    const organizationId = headers.get("x-service-organization-id");
    if (!organizationId || !isUuid(organizationId)) {
      throw new ApiError(
        "validation_error",
        "A partner request must name the organisation it acts for in X-Service-Organization-Id",
        [{ path: "X-Service-Organization-Id", message: "Required; a UUID" }],
      );
    }
    const grant = await findGrant(this.sql, app.id, organizationId.toLowerCase());
    if (!grant) {
      throw new ApiError(
        "organization_not_allowed",
        "This organisation has not authorised this partner app",
      );
    }
    // A scope claim that is not a space-separated string is malformed: it grants nothing,
    // rather than being ignored and leaving the token unnarrowed.
    const claim = check.payload.scope;
    const tokenScopes = claim === undefined
      ? null
      : new Set(typeof claim === "string" ? claim.split(" ").filter(Boolean) : []);
    const scopes = app.scopes.filter((s) =>
      grant.scopes.includes(s) && (tokenScopes === null || tokenScopes.has(s))
    );
    const principal: Principal = {
      organizationId: organizationId.toLowerCase(),
      organizationName: grant.organizationName,
      credentialKind: "partner",
      credentialId: app.id,
      scopes,
      requestsPerMinute: grant.requestsPerMinute,
      bucket: `partner:${app.id}:${organizationId.toLowerCase()}`,
    };
    const exp = typeof check.payload.exp === "number" ? check.payload.exp * 1000 : Infinity;
    return { principal, expiresAt: exp };
  }
}

/** SHA-256 of every credential header, so the cache never holds a credential itself. */
function credentialFingerprint(headers: Headers): string {
  const material = `${headers.get("x-api-key") ?? ""}\n${headers.get("x-api-secret") ?? ""}\n${
    headers.get("authorization") ?? ""
  }\n${headers.get("x-service-organization-id") ?? ""}`;
  // One call rather than createHash().update().digest(): this runs on every request.
  return hash("sha256", material, "hex");
}

/** A tenant key may name its own organisation in X-Service-Organization-Id, and no other. */
export function checkOrganizationHeader(principal: Principal, header: string | null): void {
  if (header === null) return;
  if (!isUuid(header) || header.toLowerCase() !== principal.organizationId) {
    throw new ApiError(
      "organization_not_allowed",
      "X-Service-Organization-Id names an organisation this credential is not allowed to act for",
    );
  }
}
