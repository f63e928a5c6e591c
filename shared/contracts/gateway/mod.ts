/**
 * What the gateway answers itself (the caller and the limits in force) and the platform events
 * it emits, which no integrator receives: the webhooks service acts on them.
 */
import { z } from "zod";
import { ALL_SCOPES } from "../../scopes.ts";
import { CREDENTIAL_KINDS, Uuid } from "../common.ts";
import { defineEvents } from "../events.ts";
import { operations, serviceContract } from "../operation.ts";

export const Me = z.object({
  organization: z.object({ id: Uuid, name: z.string() }),
  credential: z.object({ kind: z.enum(CREDENTIAL_KINDS), id: Uuid }),
  scopes: z.array(z.string()),
}).meta({ id: "Me" });
export type Me = z.infer<typeof Me>;

export const Limits = z.object({
  pageSizeMax: z.int(),
  bulkMaxRows: z.int(),
  maxBodyBytes: z.int(),
  idempotencyKeyMaxLength: z.int(),
  rateLimit: z.object({ requestsPerMinute: z.int(), burst: z.int() }),
  webhookSecretOverlapHours: z.int(),
}).meta({ id: "Limits" });
export type Limits = z.infer<typeof Limits>;

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
);
