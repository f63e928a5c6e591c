/**
 * What the gateway answers itself (the caller and the limits in force) and the platform events
 * it emits, which no integrator receives: the webhooks service acts on them.
 */
import { z } from "zod";
import { ALL_SCOPES } from "../../scopes.ts";
import { CREDENTIAL_KINDS, described, setExamples, Uuid } from "../common.ts";
import { defineEvents } from "../events.ts";
import { operations, serviceContract } from "../operation.ts";

export const Me = z.object(described({
  organization: z.object(described({ id: Uuid, name: z.string() }, {
    id: "The organisation's id",
    name: "The organisation's name",
  })),
  credential: z.object(described({ kind: z.enum(CREDENTIAL_KINDS), id: Uuid }, {
    kind: "`tenant_key`: the organisation's own API key; `partner`: a partner app acting for it",
    id: "The key's id, or the partner app's id",
  })),
  scopes: z.array(z.string()),
}, {
  organization: "The organisation every read and write of this credential is scoped to",
  credential: "How the caller authenticated",
  scopes: "Scopes granted to this credential, sorted; `costs.read` shows and accepts cost fields",
})).meta({ id: "Me", description: "The calling credential and what it may do" });
export type Me = z.infer<typeof Me>;
setExamples(Me, {
  organization: { id: "0192f4a0-1c2b-7d3e-8f40-5a6b7c8d9e01", name: "Inkwell Print Co." },
  credential: { kind: "tenant_key", id: "0192f4a0-2d3c-7e4f-9051-6b7c8d9e0f12" },
  scopes: ["costs.read", "quotes.read", "quotes.write", "webhooks.read", "webhooks.write"],
});

export const Limits = z.object(described({
  pageSizeMax: z.int(),
  bulkMaxRows: z.int(),
  maxBodyBytes: z.int(),
  idempotencyKeyMaxLength: z.int(),
  rateLimit: z.object(described({ requestsPerMinute: z.int(), burst: z.int() }, {
    requestsPerMinute: "Requests per minute this credential may make",
    burst: "Most requests that may be made at once after a quiet spell",
  })),
  webhookSecretOverlapHours: z.int(),
}, {
  pageSizeMax: "Largest `limit` a list honours; a larger one is capped to it",
  bulkMaxRows: "Most rows one bulk request may target",
  maxBodyBytes: "Largest request body in bytes; a larger one is refused with 413",
  idempotencyKeyMaxLength: "Longest `Idempotency-Key` accepted, in characters",
  rateLimit: "This credential's rate limit",
  webhookSecretOverlapHours: "Hours a rotated-out webhook secret keeps signing deliveries",
})).meta({ id: "Limits", description: "The limits in force for the calling credential" });
export type Limits = z.infer<typeof Limits>;
setExamples(Limits, {
  pageSizeMax: 200,
  bulkMaxRows: 1000,
  maxBodyBytes: 1_048_576,
  idempotencyKeyMaxLength: 200,
  rateLimit: { requestsPerMinute: 600, burst: 600 },
  webhookSecretOverlapHours: 48,
});

const ApiKeyRevoked = z.object({ id: Uuid, organizationId: Uuid }).meta({
  id: "ApiKeyRevokedData",
});
const PartnerGrantUpdated = z.object({
  appId: Uuid,
  organizationId: Uuid,
  /** What the app may now do for the organisation: the app's scopes ∩ the grant's. */
  scopes: z.array(z.enum(ALL_SCOPES)),
}).meta({ id: "PartnerGrantUpdatedData" });

export const gatewayEvents = defineEvents("gateway", null, {
  "api_key.revoked": {
    summary: "A tenant key was revoked; its webhook subscriptions stop delivering",
    data: ApiKeyRevoked,
  },
  "partner_grant.updated": {
    summary: "An organisation's grant to a partner app was recorded or replaced; the webhooks " +
      "service narrows (or resumes) the app's subscriptions to match",
    data: PartnerGrantUpdated,
  },
});

export const gatewayContract = serviceContract(
  "gateway",
  operations("Account", {
    getMe: {
      method: "GET",
      path: "/v1/me",
      scope: null,
      summary: "The calling credential: organisation, credential kind and id, granted scopes",
      responses: { 200: Me },
    },
    getLimits: {
      method: "GET",
      path: "/v1/reference/limits",
      scope: null,
      summary: "Live limits: page size, bulk rows, body size, idempotency key, rate limit",
      responses: { 200: Limits },
    },
  }),
  { tags: { Account: "Who is calling and the limits in force for that credential" } },
);
