import assert from "node:assert/strict";
import { connect, openDatabase, type Sql } from "@printshop/shared/db";
import { sleep } from "@printshop/shared/net";
import { createLogger } from "@printshop/shared/log";
import { createTestDatabase, type TestDatabase } from "@printshop/shared/testing";
import { createAdminApp } from "./admin_app.ts";
import { hashSecret, parseApiKey } from "./domain/api_key.ts";
import type { Envelope } from "@printshop/shared/testing";

const ADMIN_TOKEN = "admin-token-for-tests-0123456789";
const DEFAULT_RPM = 600;
const UNKNOWN_ID = "0190b1c2-3d4e-7f00-8a00-00000000dead";

/** The fields the admin API's answers carry that these tests read; lists are arrays of them. */
interface AdminRecord {
  id: string;
  name: string;
  createdAt: string;
  apiKey: string;
  scopes: string[];
  revokedAt: string | null;
  [field: string]: unknown;
}
type AdminData = AdminRecord & AdminRecord[];

interface Harness {
  db: TestDatabase;
  /** A superuser's pool for what the tests set up and check; the app runs as the runtime role. */
  sql: Sql;
  call(
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; headers: Headers; body: Envelope<AdminData> }>;
  createOrg(name?: string): Promise<string>;
  close(): Promise<void>;
}

async function harness(): Promise<Harness> {
  const db = await createTestDatabase();
  let sql: Sql;
  try {
    sql = await openDatabase(
      db.appUrl,
      "gateway",
      new URL("./migrations/", import.meta.url),
      undefined,
      {
        migrationUrl: db.ownerUrl,
      },
    );
  } catch (error) {
    await db.drop();
    throw error;
  }
  const app = createAdminApp({
    sql,
    logger: createLogger({ level: "error", write: () => {} }),
    adminToken: ADMIN_TOKEN,
    defaultRequestsPerMinute: DEFAULT_RPM,
  });
  const call: Harness["call"] = async (method, path, body, headers) => {
    const response = await app.request(path, {
      method,
      headers: {
        authorization: `Bearer ${ADMIN_TOKEN}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
    });
    return { status: response.status, headers: response.headers, body: await response.json() };
  };
  const inspect = connect(db.url, { schema: "gateway" });
  return {
    db,
    sql: inspect,
    call,
    async createOrg(name = "Acme Print") {
      const { status, body } = await call("POST", "/admin/organizations", { name });
      assert.equal(status, 201, JSON.stringify(body));
      return body.data.id;
    },
    async close() {
      await inspect.end();
      await sql.end();
      await db.drop();
    },
  };
}

Deno.test("admin API refuses a missing or wrong platform token with 401", async (t) => {
  const h = await harness();
  try {
    const cases: Record<string, Record<string, string>> = {
      "no Authorization header": { authorization: "" },
      "a wrong token": { authorization: "Bearer not-the-admin-token-at-all" },
      "the token with one character more": { authorization: `Bearer ${ADMIN_TOKEN}x` },
      "the right token under another scheme": { authorization: `Basic ${ADMIN_TOKEN}` },
      "the bare token": { authorization: ADMIN_TOKEN },
      "an empty bearer": { authorization: "Bearer " },
    };
    for (const [what, headers] of Object.entries(cases)) {
      await t.step(what, async () => {
        for (
          const [method, path, body] of [
            ["GET", "/admin/organizations", undefined],
            ["POST", "/admin/organizations", { name: "Sneaky" }],
          ] as const
        ) {
          const response = await h.call(method, path, body, headers);
          assert.equal(response.status, 401, `${method} ${path}`);
          assert.equal(response.body.error, "unauthenticated");
          assert.equal(response.body.status, false);
          assert.match(response.headers.get("www-authenticate") ?? "", /^Bearer realm=/);
        }
      });
    }

    await t.step("nothing was created by the refused requests", async () => {
      const [{ count }] = await h.sql<[{ count: number }]>`
        SELECT count(*)::int AS count FROM gateway.organizations`;
      assert.equal(count, 0);
    });
  } finally {
    await h.close();
  }
});

Deno.test("admin API creates organisations", async (t) => {
  const h = await harness();
  try {
    await t.step("201 with exactly id, name and createdAt", async () => {
      const before = Date.now();
      const { status, body } = await h.call("POST", "/admin/organizations", {
        name: "  Acme Print  ",
      });
      assert.equal(status, 201);
      assert.equal(body.status, true);
      assert.deepEqual(Object.keys(body.data).sort(), ["createdAt", "id", "name"]);
      assert.match(
        body.data.id,
        /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
      );
      assert.equal(body.data.name, "Acme Print", "the name is trimmed");
      assert.match(body.data.createdAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      assert.ok(Date.parse(body.data.createdAt) >= before - 1000);

      const read = await h.call("GET", `/admin/organizations/${body.data.id}`);
      assert.equal(read.status, 200);
      assert.equal(read.body.data.name, "Acme Print");
    });

    await t.step("a blank or missing name → 400 naming the field", async () => {
      for (const input of [{ name: "   " }, {}, { name: "x".repeat(201) }]) {
        const { status, body } = await h.call("POST", "/admin/organizations", input);
        assert.equal(status, 400, JSON.stringify(input));
        assert.equal(body.error, "validation_error");
        assert.deepEqual(body.details?.map((d) => d.path), ["name"]);
      }
    });

    await t.step("an unknown field → 400 naming it", async () => {
      const { status, body } = await h.call("POST", "/admin/organizations", {
        name: "Acme",
        plan: "gold",
      });
      assert.equal(status, 400);
      assert.equal(body.error, "validation_error");
      assert.deepEqual(body.details, [{ path: "plan", message: 'Unknown field "plan"' }]);
    });

    await t.step("a name Postgres cannot store (a NUL character) → 400, not 500", async () => {
      const { status, body } = await h.call("POST", "/admin/organizations", { name: "Acme\u0000" });
      assert.equal(status, 400, JSON.stringify(body));
      assert.equal(body.error, "validation_error");
      assert.deepEqual(body.details?.map((d) => d.path), ["name"]);
    });

    await t.step("a body over 64 KiB → 413", async () => {
      const { status, body } = await h.call("POST", "/admin/organizations", {
        name: "Acme",
        padding: "x".repeat(70 * 1024),
      });
      assert.equal(status, 413);
      assert.equal(body.error, "payload_too_large");
    });

    await t.step("malformed JSON → 400 invalid_json", async () => {
      const { status, body } = await h.call("POST", "/admin/organizations", "{name:");
      assert.equal(status, 400);
      assert.equal(body.error, "invalid_json");
    });
  } finally {
    await h.close();
  }
});

Deno.test("admin API issues API keys that are stored only as a hash", async (t) => {
  const h = await harness();
  try {
    const orgId = await h.createOrg();

    await t.step("201 shows the key once, with its scopes de-duplicated", async () => {
      const { status, body } = await h.call("POST", `/admin/organizations/${orgId}/api-keys`, {
        name: "Shop floor",
        scopes: ["quotes.read", "quotes.write", "quotes.read"],
      });
      assert.equal(status, 201);
      assert.match(body.data.apiKey, /^psk_[A-Za-z0-9]{16}_[A-Za-z0-9_-]{43}$/);
      assert.equal(body.data.name, "Shop floor");
      assert.deepEqual(body.data.scopes, ["quotes.read", "quotes.write"]);

      const apiKey: string = body.data.apiKey;
      const parsed = parseApiKey(apiKey)!;
      const rows = await h.sql<Record<string, unknown>[]>`
        SELECT * FROM gateway.api_keys WHERE id = ${body.data.id}`;
      assert.equal(rows.length, 1);
      const row = rows[0]!;
      assert.equal(row.organization_id, orgId);
      assert.equal(row.lookup, parsed.lookup);
      const hash = row.secret_hash as Uint8Array;
      assert.equal(hash.length, 32);
      assert.deepEqual(new Uint8Array(hash), await hashSecret(parsed.secret));
      for (const [column, value] of Object.entries(row)) {
        const text = value instanceof Uint8Array
          ? new TextDecoder().decode(value)
          : JSON.stringify(value);
        assert.ok(!text.includes(apiKey), `column ${column} holds the key`);
        assert.ok(!text.includes(parsed.secret), `column ${column} holds the secret`);
      }

      const list = await h.call("GET", `/admin/organizations/${orgId}/api-keys`);
      assert.equal(list.status, 200);
      assert.equal(list.body.data.length, 1);
      assert.ok(!JSON.stringify(list.body).includes(parsed.secret), "listing never shows it");
    });

    await t.step("an unknown scope → 400 validation_error naming it", async () => {
      const { status, body } = await h.call("POST", `/admin/organizations/${orgId}/api-keys`, {
        scopes: ["quotes.read", "quotes.delete"],
      });
      assert.equal(status, 400);
      assert.equal(body.error, "validation_error");
      assert.equal(body.details?.[0]?.path, "scopes.1");
      assert.match(body.details?.[0]?.message ?? "", /Unknown scope "quotes\.delete"/);
      assert.match(body.message, /quotes\.delete/);
    });

    await t.step("no scopes → 400", async () => {
      const { status, body } = await h.call("POST", `/admin/organizations/${orgId}/api-keys`, {
        scopes: [],
      });
      assert.equal(status, 400);
      assert.deepEqual(body.details?.map((d) => d.path), ["scopes"]);
    });

    await t.step("an unknown field → 400 naming it", async () => {
      const { status, body } = await h.call("POST", `/admin/organizations/${orgId}/api-keys`, {
        scopes: ["quotes.read"],
        expiresAt: "2030-01-01",
      });
      assert.equal(status, 400);
      assert.equal(body.error, "validation_error");
      assert.deepEqual(body.details, [{ path: "expiresAt", message: 'Unknown field "expiresAt"' }]);
    });

    await t.step("an unknown organisation → 404", async () => {
      const { status, body } = await h.call("POST", `/admin/organizations/${UNKNOWN_ID}/api-keys`, {
        scopes: ["quotes.read"],
      });
      assert.equal(status, 404);
      assert.equal(body.error, "not_found");
      assert.match(body.message, new RegExp(UNKNOWN_ID));
    });

    await t.step("a malformed organisation id → 400", async () => {
      const { status, body } = await h.call("POST", "/admin/organizations/acme/api-keys", {
        scopes: ["quotes.read"],
      });
      assert.equal(status, 400);
      assert.equal(body.error, "validation_error");
      assert.deepEqual(body.details?.map((d) => d.path), ["orgId"]);
    });

    await t.step("nothing was stored by the refused requests", async () => {
      const [{ count }] = await h.sql<[{ count: number }]>`
        SELECT count(*)::int AS count FROM gateway.api_keys`;
      assert.equal(count, 1);
    });
  } finally {
    await h.close();
  }
});

Deno.test("admin API revokes a key once and keeps the first revocation time", async (t) => {
  const h = await harness();
  try {
    const orgId = await h.createOrg();
    const created = await h.call("POST", `/admin/organizations/${orgId}/api-keys`, {
      scopes: ["quotes.read"],
    });
    const keyId: string = created.body.data.id;

    let firstRevokedAt = "";
    await t.step("revoke → 200 with the revocation time", async () => {
      const { status, body } = await h.call("DELETE", `/admin/api-keys/${keyId}`);
      assert.equal(status, 200);
      assert.equal(body.data.id, keyId);
      assert.match(body.data.revokedAt ?? "", /^\d{4}-\d{2}-\d{2}T/);
      firstRevokedAt = body.data.revokedAt ?? "";
    });

    await t.step("revoking again → 200 with the same time", async () => {
      await sleep(20);
      const { status, body } = await h.call("DELETE", `/admin/api-keys/${keyId}`);
      assert.equal(status, 200);
      assert.equal(body.data.revokedAt, firstRevokedAt);
    });

    await t.step("the listing shows the key as revoked", async () => {
      const { body } = await h.call("GET", `/admin/organizations/${orgId}/api-keys`);
      assert.equal(body.data[0]!.revokedAt, firstRevokedAt);
    });

    await t.step("an unknown key → 404, a malformed id → 400", async () => {
      assert.equal((await h.call("DELETE", `/admin/api-keys/${UNKNOWN_ID}`)).status, 404);
      const malformed = await h.call("DELETE", "/admin/api-keys/123");
      assert.equal(malformed.status, 400);
      assert.deepEqual(malformed.body.details?.map((d) => d.path), ["keyId"]);
    });
  } finally {
    await h.close();
  }
});

Deno.test("admin API sets an organisation's rate limit and reports the effective value", async (t) => {
  const h = await harness();
  try {
    const orgId = await h.createOrg();

    await t.step("a number is the override and the effective value", async () => {
      const { status, body } = await h.call("PUT", `/admin/organizations/${orgId}/limits`, {
        requestsPerMinute: 1200,
      });
      assert.equal(status, 200);
      assert.deepEqual(body.data, {
        organizationId: orgId,
        requestsPerMinute: 1200,
        effectiveRequestsPerMinute: 1200,
      });
      const [row] = await h.sql<{ requests_per_minute: number | null }[]>`
        SELECT requests_per_minute FROM gateway.organizations WHERE id = ${orgId}`;
      assert.equal(row?.requests_per_minute, 1200);
    });

    await t.step("null clears the override, so the default applies", async () => {
      const { status, body } = await h.call("PUT", `/admin/organizations/${orgId}/limits`, {
        requestsPerMinute: null,
      });
      assert.equal(status, 200);
      assert.deepEqual(body.data, {
        organizationId: orgId,
        requestsPerMinute: null,
        effectiveRequestsPerMinute: DEFAULT_RPM,
      });
    });

    await t.step("zero, fractions, huge values and a missing field → 400", async () => {
      for (
        const input of [
          { requestsPerMinute: 0 },
          { requestsPerMinute: 1.5 },
          { requestsPerMinute: 1_000_001 },
          { requestsPerMinute: "600" },
          {},
        ]
      ) {
        const { status, body } = await h.call("PUT", `/admin/organizations/${orgId}/limits`, input);
        assert.equal(status, 400, JSON.stringify(input));
        assert.deepEqual(body.details?.map((d) => d.path), ["requestsPerMinute"]);
      }
    });

    await t.step("an unknown organisation → 404", async () => {
      const { status, body } = await h.call("PUT", `/admin/organizations/${UNKNOWN_ID}/limits`, {
        requestsPerMinute: 10,
      });
      assert.equal(status, 404);
      assert.equal(body.error, "not_found");
    });
  } finally {
    await h.close();
  }
});

Deno.test("admin API grants record partner_grant.updated with the app's rights, in the same transaction", async (t) => {
  const h = await harness();
  try {
    const orgId = await h.createOrg();
    const created = await h.call("POST", "/admin/partner-apps", {
      name: "Storefront Connector",
      scopes: ["quotes.read", "quotes.write", "costs.read", "webhooks.write"],
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const appId = created.body.data.id;
    const grantPath = `/admin/partner-apps/${appId}/grants`;
    const events = async (): Promise<
      { organization_id: string; aggregate_id: string; payload: unknown }[]
    > => [
      ...await h.sql<{ organization_id: string; aggregate_id: string; payload: unknown }[]>`
        SELECT organization_id, aggregate_id, payload FROM gateway.outbox
        WHERE type = 'partner_grant.updated' ORDER BY created_at, id`,
    ];
    const grantedScopes = async (): Promise<string[] | undefined> => {
      const [row] = await h.sql<{ scopes: string[] }[]>`
        SELECT scopes FROM gateway.partner_grants
        WHERE app_id = ${appId} AND organization_id = ${orgId}`;
      return row?.scopes;
    };

    await t.step("a first grant → 201 and the event carries app ∩ grant", async () => {
      const { status, body } = await h.call("POST", grantPath, {
        organizationId: orgId,
        // customers.read is granted but the app was never given it: not in the event.
        scopes: ["costs.read", "quotes.read", "customers.read", "webhooks.write"],
      });
      assert.equal(status, 201, JSON.stringify(body));
      assert.deepEqual(await events(), [{
        organization_id: orgId,
        aggregate_id: appId,
        payload: {
          appId,
          organizationId: orgId,
          scopes: ["quotes.read", "costs.read", "webhooks.write"],
        },
      }]);
    });

    await t.step("narrowing the grant → 200 and one more event with what is left", async () => {
      const { status } = await h.call("POST", grantPath, {
        organizationId: orgId,
        scopes: ["webhooks.write"],
      });
      assert.equal(status, 200);
      const all = await events();
      assert.equal(all.length, 2);
      assert.deepEqual(all[1]!.payload, {
        appId,
        organizationId: orgId,
        scopes: ["webhooks.write"],
      });
    });

    await t.step("when the event cannot be written, the grant does not change either", async () => {
      await h.sql.unsafe(`
        CREATE FUNCTION gateway.refuse_outbox() RETURNS trigger LANGUAGE plpgsql
        AS $$ BEGIN RAISE EXCEPTION 'outbox refused by the test'; END $$;
        CREATE TRIGGER refuse_outbox BEFORE INSERT ON gateway.outbox
          FOR EACH ROW EXECUTE FUNCTION gateway.refuse_outbox();`);
      try {
        const { status, body } = await h.call("POST", grantPath, {
          organizationId: orgId,
          scopes: ["quotes.read", "costs.read"],
        });
        assert.equal(status, 500);
        assert.equal(body.error, "internal_error");
        assert.deepEqual(await grantedScopes(), ["webhooks.write"], "the upsert was rolled back");
      } finally {
        await h.sql.unsafe(`
          DROP TRIGGER refuse_outbox ON gateway.outbox; DROP FUNCTION gateway.refuse_outbox();`);
      }
      assert.equal((await events()).length, 2);
    });

    await t.step("an unknown app or organisation → 404 and no event", async () => {
      const unknownApp = await h.call("POST", `/admin/partner-apps/${UNKNOWN_ID}/grants`, {
        organizationId: orgId,
        scopes: ["quotes.read"],
      });
      assert.equal(unknownApp.status, 404);
      const unknownOrg = await h.call("POST", grantPath, {
        organizationId: UNKNOWN_ID,
        scopes: ["quotes.read"],
      });
      assert.equal(unknownOrg.status, 404);
      assert.equal((await events()).length, 2);
    });
  } finally {
    await h.close();
  }
});
