import type { Sql } from "@printshop/shared/db";
import { ApiError } from "@printshop/shared/http";
import { isUuid } from "@printshop/shared/ids";
import type { CredentialKind } from "@printshop/shared/internal-context";
import { hashSecret, parseApiKey, sameBytes } from "./domain/api_key.ts";
import { findActiveKey } from "./store/api_keys.ts";

export interface Principal {
  organizationId: string;
  organizationName: string;
  credentialKind: CredentialKind;
  credentialId: string;
  scopes: string[];
  requestsPerMinute: number | null;
}

const TENANT_CHALLENGE = 'ApiKey realm="printshop", header="X-API-Key"';

function unauthenticated(message: string): ApiError {
  return new ApiError("unauthenticated", message, undefined, {
    "WWW-Authenticate": TENANT_CHALLENGE,
  });
}

/**
 * Resolves the caller from its headers. Every failure is the same 401 shape; which part failed
 * is said in the message but never echoes the credential.
 */
export async function authenticate(sql: Sql, headers: Headers): Promise<Principal> {
  const apiKey = headers.get("x-api-key");
  const authorization = headers.get("authorization");
  if (authorization !== null && !headers.has("x-api-secret")) {
    throw unauthenticated(
      "A tenant API key must be sent in the X-API-Key header, not as an Authorization bearer token",
    );
  }
  if (headers.has("x-api-secret")) {
    throw unauthenticated("Partner credentials are not accepted by this gateway");
  }
  if (!apiKey) throw unauthenticated("Missing credential: send your API key in X-API-Key");
  const parsed = parseApiKey(apiKey);
  // Hash even when the format is wrong, so timing does not tell well-formed keys apart.
  const hash = await hashSecret(parsed?.secret ?? apiKey);
  const key = parsed ? await findActiveKey(sql, parsed.lookup) : null;
  if (!key || !sameBytes(hash, key.secretHash)) {
    throw unauthenticated("Invalid or revoked API key");
  }
  const principal: Principal = {
    organizationId: key.organizationId,
    organizationName: key.organizationName,
    credentialKind: "tenant_key",
    credentialId: key.id,
    scopes: key.scopes,
    requestsPerMinute: key.requestsPerMinute,
  };
  checkOrganizationHeader(principal, headers.get("x-service-organization-id"));
  return principal;
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
