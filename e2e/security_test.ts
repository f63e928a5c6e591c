/**
 * Credential hygiene through real processes: secrets are stored only as hashes, a revoked key
 * stops working on every gateway replica within the documented cache lifetime, and no credential
 * that crosses the gateway ends up in a log.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { connect } from "@printshop/shared/db";
import { sleep, waitFor } from "@printshop/shared/net";
import { type Envelope, startTestStack, type TestStack } from "@printshop/shared/testing";
import { AUTH_CACHE_TTL_MS } from "../gateway/auth.ts";

interface PartnerAppCreated {
  id: string;
  clientId: string;
  clientSecret: string;
}

const ISSUER = "https://idp.test/";
const AUDIENCE = "printshop-api";

const body = async <T = Record<string, unknown>>(res: Response): Promise<Envelope<T>> =>
  await res.json() as Envelope<T>;

async function expectStatus(res: Response, status: number, label: string): Promise<void> {
  const text = await res.text();
  assertEquals(res.status, status, `${label}: ${text}`);
}

/** A tenant key is `psk_<16-char lookup>_<43-char secret>`; the secret may itself contain `_`. */
function secretOfKey(apiKey: string): string {
  const match = apiKey.match(/^psk_[A-Za-z0-9]{16}_([A-Za-z0-9_-]{43})$/);
  assert(match, `unexpected API key shape: ${apiKey.slice(0, 8)}…`);
  return match[1]!;
}

const hex = (bytes: Uint8Array): string =>
  Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");

const sha256 = async (text: string): Promise<Uint8Array> =>
  new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));

Deno.test("credentials are hashed at rest, revoked across replicas, and never logged", async (t) => {
  const idpKey = await generateKeyPair("RS256");
  const publicJwk = {
    ...await exportJWK(idpKey.publicKey),
    kid: "idp-1",
    alg: "RS256",
    use: "sig",
  };
  await using jwks = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => Response.json({ keys: [publicJwk] }),
  );
  await using stack: TestStack = await startTestStack({
    // Debug level: nothing secret may be logged at any level.
    env: { LOG_LEVEL: "debug" },
    processEnv: {
      gateway: {
        PARTNER_JWKS_URL: `http://127.0.0.1:${jwks.addr.port}/jwks.json`,
        PARTNER_TOKEN_ISSUER: ISSUER,
        PARTNER_TOKEN_AUDIENCE: AUDIENCE,
      },
    },
  });

  const shop = await stack.tenant(undefined, "Careful Print Shop");
  const reader = await stack.tenant(["quotes.read"], "Reading Print Shop");
  const partner = (await stack.admin<Envelope<PartnerAppCreated>>("POST", "/admin/partner-apps", {
    name: "Careful Connector",
    scopes: ["quotes.read", "quotes.write"],
  })).data;
  await stack.admin("POST", `/admin/partner-apps/${partner.id}/grants`, {
    organizationId: shop.organizationId,
    scopes: ["quotes.read"],
  });

  /** Every credential-like string sent to the stack; none of it may ever be logged. */
  const sent = new Set<string>([stack.adminToken]);
  const remember = (secret: string): string => {
    sent.add(secret);
    return secret;
  };
  for (const key of [shop.apiKey, reader.apiKey]) {
    remember(key);
    remember(secretOfKey(key));
  }
  remember(partner.clientSecret);
  remember(partner.clientSecret.replace(/^pcs_/, ""));

  const mint = async (claims: Record<string, unknown> = {}): Promise<string> => {
    const now = Math.floor(Date.now() / 1000);
    const jwt = await new SignJWT({
      iss: ISSUER,
      aud: AUDIENCE,
      iat: now,
      exp: now + 300,
      jti: crypto.randomUUID(),
      client_id: partner.clientId,
      ...claims,
    }).setProtectedHeader({ alg: "RS256", kid: "idp-1", typ: "JWT" }).sign(idpKey.privateKey);
    remember(jwt);
    // The signature alone is as unique as the whole token.
    remember(jwt.split(".")[2]!);
    return jwt;
  };

  const partnerHeaders = async (
    overrides: { secret?: string; token?: string } = {},
  ): Promise<Record<string, string>> => ({
    "x-api-secret": overrides.secret ?? partner.clientSecret,
    authorization: `Bearer ${overrides.token ?? await mint()}`,
    "x-service-organization-id": shop.organizationId,
  });

  await t.step(
    "partner secrets and tenant keys are stored only as SHA-256 hashes of their secret part",
    async () => {
      const sql = connect(stack.db.url, { schema: "gateway", max: 1 });
      try {
        const apps = await sql<{ client_id: string; secret_hash: Uint8Array; row: string }[]>`
          SELECT client_id, secret_hash, row_to_json(p)::text AS row FROM partner_apps p`;
        const app = apps.find((a) => a.client_id === partner.clientId);
        assert(app, "the partner app is stored");
        const appHash = new Uint8Array(app.secret_hash);
        assertEquals(appHash.length, 32);
        assertEquals(hex(appHash), hex(await sha256(partner.clientSecret)));

        const keys = await sql<{ id: string; secret_hash: Uint8Array; row: string }[]>`
          SELECT id, secret_hash, row_to_json(k)::text AS row FROM api_keys k`;
        for (const tenant of [shop, reader]) {
          const key = keys.find((k) => k.id === tenant.keyId);
          assert(key, "the key is stored");
          const keyHash = new Uint8Array(key.secret_hash);
          assertEquals(keyHash.length, 32);
          assertEquals(hex(keyHash), hex(await sha256(secretOfKey(tenant.apiKey))));
        }

        // No column of any gateway table holds a secret, as text or as its bytes.
        const tables = await sql<{ table_name: string }[]>`
          SELECT table_name FROM information_schema.tables
          WHERE table_schema = 'gateway' AND table_type = 'BASE TABLE'`;
        assert(tables.some((r) => r.table_name === "partner_apps"));
        assert(tables.some((r) => r.table_name === "api_keys"));
        const secrets = [
          partner.clientSecret,
          partner.clientSecret.replace(/^pcs_/, ""),
          ...[shop, reader].flatMap((k) => [k.apiKey, secretOfKey(k.apiKey)]),
        ];
        for (const { table_name } of tables) {
          const rows = await sql<{ row: string }[]>`
            SELECT row_to_json(r)::text AS row FROM ${sql(table_name)} r`;
          for (const { row } of rows) {
            for (const secret of secrets) {
              assert(!row.includes(secret), `gateway.${table_name} holds a secret in clear`);
              const asBytes = hex(new TextEncoder().encode(secret));
              assert(!row.includes(asBytes), `gateway.${table_name} holds a secret's bytes`);
            }
          }
        }
      } finally {
        await sql.end();
      }
    },
  );

  await t.step(
    `a revoked key fails at once where it was revoked, and on a replica within ${AUTH_CACHE_TTL_MS} ms`,
    async () => {
      const replica = await stack.startGatewayReplica();
      const doomed = await stack.admin<Envelope<{ id: string; apiKey: string }>>(
        "POST",
        `/admin/organizations/${shop.organizationId}/api-keys`,
        { scopes: ["quotes.read"] },
      );
      const doomedKey = remember(doomed.data.apiKey);
      remember(secretOfKey(doomedKey));
      const onReplica = (): Promise<Response> =>
        fetch(`${replica.gatewayUrl}/v1/me`, { headers: { "x-api-key": doomedKey } });
      // Both gateways have resolved (and cached) the key before it is revoked.
      await expectStatus(await onReplica(), 200, "replica before revocation");
      await expectStatus(await stack.call(doomedKey, "GET", "/v1/me"), 200, "primary before");

      await stack.admin("DELETE", `/admin/api-keys/${doomed.data.id}`);
      const primary = await stack.call(doomedKey, "GET", "/v1/me");
      assertEquals([primary.status, (await body(primary)).error], [401, "unauthenticated"]);

      await sleep(AUTH_CACHE_TTL_MS + 500);
      const later = await onReplica();
      assertEquals([later.status, (await body(later)).error], [401, "unauthenticated"]);
      const primaryLater = await stack.call(doomedKey, "GET", "/v1/me");
      await expectStatus(primaryLater, 401, "primary later");
      // The other keys of the organisation still work on both.
      await expectStatus(await stack.call(shop.apiKey, "GET", "/v1/me"), 200, "sibling key");
      await expectStatus(
        await fetch(`${replica.gatewayUrl}/v1/me`, { headers: { "x-api-key": shop.apiKey } }),
        200,
        "sibling key on the replica",
      );
    },
  );

  await t.step("a burst of good and bad credentials leaves no credential in any log", async () => {
    const forged = remember(`${shop.apiKey.slice(0, -6)}ABCDEF`);
    const wrongFormat = remember(`psk_${crypto.randomUUID().replaceAll("-", "")}`);
    const wrongSecret = remember(`pcs_${crypto.randomUUID().replaceAll("-", "")}`);
    const adminGuess = remember(crypto.randomUUID().replaceAll("-", ""));
    const expired = await mint({ exp: Math.floor(Date.now() / 1000) - 3600 });
    const attempts: [string, () => Promise<Response>, number][] = [
      ["right key", () => stack.call(shop.apiKey, "GET", "/v1/quotes"), 200],
      ["right reader key", () => stack.call(reader.apiKey, "GET", "/v1/me"), 200],
      ["reader key writing", () => stack.call(reader.apiKey, "POST", "/v1/quotes", {}), 403],
      ["forged key", () => stack.call(forged, "GET", "/v1/quotes"), 401],
      ["wrong format", () => stack.call(wrongFormat, "GET", "/v1/quotes"), 401],
      [
        "key as a bearer token",
        () =>
          stack.call(null, "GET", "/v1/quotes", undefined, {
            authorization: `Bearer ${shop.apiKey}`,
          }),
        401,
      ],
      [
        "key both ways",
        () =>
          stack.call(shop.apiKey, "GET", "/v1/quotes", undefined, {
            authorization: `Bearer ${shop.apiKey}`,
          }),
        401,
      ],
      [
        "key in the query string",
        () => stack.call(null, "GET", `/v1/quotes?api_key=${encodeURIComponent(shop.apiKey)}`),
        401,
      ],
      [
        "tenant key with a wrong X-API-Secret",
        () => stack.call(shop.apiKey, "GET", "/v1/me", undefined, { "x-api-secret": wrongSecret }),
        401,
      ],
      [
        "tenant key with the partner secret",
        async () =>
          stack.call(shop.apiKey, "GET", "/v1/me", undefined, {
            ...await partnerHeaders(),
          }),
        401,
      ],
      [
        "partner, all right",
        async () =>
          stack.call(partner.clientId, "GET", "/v1/me", undefined, await partnerHeaders()),
        200,
      ],
      [
        "partner, wrong secret",
        async () =>
          stack.call(
            partner.clientId,
            "GET",
            "/v1/me",
            undefined,
            await partnerHeaders({ secret: wrongSecret }),
          ),
        401,
      ],
      [
        "partner, expired token",
        async () =>
          stack.call(
            partner.clientId,
            "GET",
            "/v1/me",
            undefined,
            await partnerHeaders({ token: expired }),
          ),
        401,
      ],
      [
        "partner secret as the API key",
        () => stack.call(partner.clientSecret, "GET", "/v1/me"),
        401,
      ],
      [
        "partner token without the partner headers",
        async () =>
          stack.call(null, "GET", "/v1/me", undefined, { authorization: `Bearer ${await mint()}` }),
        401,
      ],
      [
        "partner writing beyond its grant",
        async () => stack.call(partner.clientId, "POST", "/v1/quotes", {}, await partnerHeaders()),
        403,
      ],
      [
        "admin token on the public API",
        () =>
          stack.call(null, "GET", "/v1/me", undefined, {
            authorization: `Bearer ${stack.adminToken}`,
          }),
        401,
      ],
      [
        "admin token as an API key",
        () => stack.call(stack.adminToken, "GET", "/v1/me"),
        401,
      ],
      [
        "wrong admin token",
        () =>
          fetch(`${stack.adminUrl}/admin/organizations`, {
            headers: { authorization: `Bearer ${adminGuess}` },
          }),
        401,
      ],
      [
        "tenant key on the admin API",
        () =>
          fetch(`${stack.adminUrl}/admin/organizations`, {
            headers: { authorization: `Bearer ${shop.apiKey}` },
          }),
        401,
      ],
      [
        "right admin token",
        () =>
          fetch(`${stack.adminUrl}/admin/organizations`, {
            headers: { authorization: `Bearer ${stack.adminToken}` },
          }),
        200,
      ],
    ];
    for (let round = 0; round < 3; round++) {
      await Promise.all(attempts.map(async ([label, attempt, status]) => {
        await expectStatus(await attempt(), status, `${label} (round ${round + 1})`);
      }));
    }

    // Log lines reach the files asynchronously: wait for a marker sent after the burst.
    const marker = `security-burst-end-${crypto.randomUUID()}`;
    await expectStatus(
      await stack.call(shop.apiKey, "GET", "/v1/me", undefined, { "x-request-id": marker }),
      200,
      "marker",
    );
    let logs = "";
    await waitFor("the gateway's log to catch up", async () => {
      logs = await stack.logs();
      return logs.includes(marker);
    }, 5_000);
    assert(logs.includes('"status":401'), "the refused attempts were logged");
    assert(logs.includes('"status":200'));
    for (const secret of sent) {
      assert(secret.length >= 20, "only long, random strings are checked");
      const where = logs.indexOf(secret);
      assert(
        where === -1,
        `a credential (${secret.slice(0, 6)}…) was logged: …${
          logs.slice(Math.max(0, where - 120), where).replaceAll(secret, "<secret>")
        }…`,
      );
    }
  });
});
