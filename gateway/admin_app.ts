import { Hono } from "hono";
import { z } from "zod";
import type { Sql } from "@printshop/shared/db";
import {
  ApiError,
  created,
  errorBody,
  ok,
  parseJsonText,
  parseWith,
  readUuidParam,
} from "@printshop/shared/http";
import { ALL_SCOPES, isScope } from "@printshop/shared/scopes";
import type { Logger } from "@printshop/shared/log";
import {
  errorToResponse,
  requestContext,
  type RequestVariables,
} from "@printshop/shared/service-defaults";
import { Text } from "@printshop/shared/contracts";
import { INTERNAL_MAIL_PATH, PLATFORM_MAIL_SCOPE } from "@printshop/shared/contracts/proofs";
import {
  type ContextKey,
  INTERNAL_CONTEXT_HEADER,
  PLATFORM_ORGANIZATION_ID,
  signInternalContext,
} from "@printshop/shared/internal-context";
import { sameSecret } from "./domain/api_key.ts";
import { readLimitedBody } from "./body.ts";
import {
  createOrganization,
  findOrganization,
  listOrganizations,
  setRequestsPerMinute,
} from "./store/organizations.ts";
import { createApiKey, listApiKeys, revokeApiKey } from "./store/api_keys.ts";
import { createPartnerApp, findPartnerAppById, upsertGrant } from "./store/partner_apps.ts";

export interface AdminDeps {
  sql: Sql;
  logger: Logger;
  adminToken: string;
  defaultRequestsPerMinute: number;
  /** Called after a change that may invalidate cached credentials (revocation, limits, grants). */
  onCredentialsChanged?: () => void;
  /**
   * Where `GET /admin/mail` reads the mail outbox: the proofs service owns it, so the admin API
   * reads it through the service's internal route, signed like every gateway → service call.
   */
  proofs?: { url: string; contextKey: ContextKey };
}

/** The proofs service's mail outbox, as its internal route answers it (an envelope). */
async function readMailOutbox(
  proofs: { url: string; contextKey: ContextKey },
  requestId: string,
): Promise<Response> {
  const header = await signInternalContext(proofs.contextKey, "GET", INTERNAL_MAIL_PATH, {
    organizationId: PLATFORM_ORGANIZATION_ID,
    credentialKind: "tenant_key",
    credentialId: "platform-admin",
    scopes: [PLATFORM_MAIL_SCOPE],
    requestId,
    issuedAt: Date.now(),
  });
  let res: Response;
  try {
    res = await fetch(`${proofs.url}${INTERNAL_MAIL_PATH}`, {
      headers: { [INTERNAL_CONTEXT_HEADER]: header, "x-request-id": requestId },
      signal: AbortSignal.timeout(10_000),
    });
  } catch {
    throw new ApiError("service_unavailable", 'Service "proofs" does not answer; try again');
  }
  if (!res.ok) {
    await res.body?.cancel();
    throw new ApiError("service_unavailable", 'Service "proofs" could not read its mail outbox');
  }
  return new Response(res.body, {
    status: 200,
    headers: { "content-type": "application/json; charset=utf-8" },
  });
}

const ADMIN_BODY_LIMIT = 64 * 1024;

const Scopes = z.array(z.string()).min(1, "Give at least one scope").superRefine((scopes, ctx) => {
  scopes.forEach((scope, i) => {
    if (!isScope(scope)) {
      ctx.addIssue({
        code: "custom",
        path: [i],
        message: `Unknown scope "${scope}"; known scopes: ${ALL_SCOPES.join(", ")}`,
      });
    }
  });
}).transform((scopes) => [...new Set(scopes)]);

const CreateOrganizationBody = z.strictObject({ name: Text(200) });
const CreateApiKeyBody = z.strictObject({ name: Text(200).optional(), scopes: Scopes });
const CreatePartnerAppBody = z.strictObject({ name: Text(200), scopes: Scopes });
const GrantBody = z.strictObject({
  organizationId: z.uuid({ error: "Must be a UUID" }),
  scopes: Scopes,
});
const SetLimitsBody = z.strictObject({
  requestsPerMinute: z.int("Must be a whole number").min(1, "Must be at least 1")
    .max(1_000_000, "Must be at most 1000000").nullable(),
});

async function body<S extends z.ZodType>(request: Request, schema: S): Promise<z.output<S>> {
  const bytes = await readLimitedBody(request, ADMIN_BODY_LIMIT);
  const text = bytes ? new TextDecoder().decode(bytes) : "";
  return parseWith(schema, text.trim() === "" ? {} : parseJsonText(text), "request body");
}

/** The platform operator's API (operator-interface.md), on its own port and token. */
export function createAdminApp(deps: AdminDeps): Hono<{ Variables: RequestVariables }> {
  const { sql } = deps;
  const app = new Hono<{ Variables: RequestVariables }>();
  app.use("*", requestContext("gateway", deps.logger.child({ component: "admin" })));
  app.use("/admin/*", async (c, next) => {
    const header = c.req.header("authorization") ?? "";
    const token = header.startsWith("Bearer ") ? header.slice(7) : "";
    if (!token || !(await sameSecret(token, deps.adminToken))) {
      throw new ApiError("unauthenticated", "Missing or wrong platform admin token", undefined, {
        "WWW-Authenticate": 'Bearer realm="printshop-admin"',
      });
    }
    await next();
  });

  const limitsOf = (org: { id: string; requestsPerMinute: number | null }): unknown => ({
    organizationId: org.id,
    requestsPerMinute: org.requestsPerMinute,
    effectiveRequestsPerMinute: org.requestsPerMinute ?? deps.defaultRequestsPerMinute,
  });

  app.post("/admin/organizations", async (c) => {
    const input = await body(c.req.raw, CreateOrganizationBody);
    const org = await createOrganization(sql, input.name);
    return created(
      c,
      { id: org.id, name: org.name, createdAt: org.createdAt },
      "Organization created",
    );
  });

  app.get("/admin/organizations", async (c) => ok(c, await listOrganizations(sql)));

  app.get("/admin/organizations/:orgId", async (c) => {
    const orgId = readUuidParam(c, "orgId");
    return ok(c, await findOrganization(sql, orgId));
  });

  app.post("/admin/organizations/:orgId/api-keys", async (c) => {
    const orgId = readUuidParam(c, "orgId");
    const input = await body(c.req.raw, CreateApiKeyBody);
    await findOrganization(sql, orgId);
    const { record, token } = await createApiKey(sql, orgId, input.name ?? null, input.scopes);
    return created(c, {
      id: record.id,
      apiKey: token,
      name: record.name,
      scopes: record.scopes,
      createdAt: record.createdAt,
    }, "API key created; it is shown only in this response");
  });

  app.get("/admin/organizations/:orgId/api-keys", async (c) => {
    const orgId = readUuidParam(c, "orgId");
    await findOrganization(sql, orgId);
    return ok(c, await listApiKeys(sql, orgId));
  });

  app.delete("/admin/api-keys/:keyId", async (c) => {
    const keyId = readUuidParam(c, "keyId");
    const record = await revokeApiKey(sql, keyId);
    deps.onCredentialsChanged?.();
    return ok(c, { id: record.id, revokedAt: record.revokedAt }, { message: "API key revoked" });
  });

  app.put("/admin/organizations/:orgId/limits", async (c) => {
    const orgId = readUuidParam(c, "orgId");
    const input = await body(c.req.raw, SetLimitsBody);
    const org = await setRequestsPerMinute(sql, orgId, input.requestsPerMinute);
    deps.onCredentialsChanged?.();
    return ok(c, limitsOf(org), { message: "Limits updated" });
  });

  app.post("/admin/partner-apps", async (c) => {
    const input = await body(c.req.raw, CreatePartnerAppBody);
    const { app: partner, clientSecret } = await createPartnerApp(sql, input.name, input.scopes);
    return created(c, {
      id: partner.id,
      name: partner.name,
      clientId: partner.clientId,
      clientSecret,
      scopes: partner.scopes,
      createdAt: partner.createdAt,
    }, "Partner app created; the client secret is shown only in this response");
  });

  app.post("/admin/partner-apps/:appId/grants", async (c) => {
    const appId = readUuidParam(c, "appId");
    const input = await body(c.req.raw, GrantBody);
    await findPartnerAppById(sql, appId);
    await findOrganization(sql, input.organizationId);
    const grant = await upsertGrant(sql, appId, input.organizationId, input.scopes);
    deps.onCredentialsChanged?.();
    return grant.createdAt === grant.updatedAt
      ? created(c, grant, "Grant recorded")
      : ok(c, grant, { message: "Grant updated" });
  });

  app.get("/admin/mail", async (c) => {
    if (!deps.proofs) {
      throw new ApiError("service_unavailable", "The admin API was started without PROOFS_URL");
    }
    return await readMailOutbox(deps.proofs, c.get("requestId"));
  });

  app.notFound((c) => c.json(errorBody("route_not_found", "No such endpoint"), 404));
  app.onError((error, c) => errorToResponse(error, c));
  return app;
}
