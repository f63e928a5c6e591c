/**
 * The authenticator against a real PostgreSQL, with every query it sends counted: failed
 * credentials cost their address group, a group that has failed too often gets 429 without a
 * query, and a credential that has worked before is never refused for its address.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { openDatabase } from "@printshop/shared/db";
import { ApiError } from "@printshop/shared/http";
import { createTestDatabase } from "@printshop/shared/testing";
import { Authenticator, type Principal } from "./auth.ts";
import { generateApiKey } from "./domain/api_key.ts";
import { FAILED_LOOKUP_POLICY } from "./domain/failed_lookups.ts";
import { FailedLookupLimiter } from "./failed_lookup_limiter.ts";
import { createApiKey, revokeApiKey } from "./store/api_keys.ts";
import { createOrganization } from "./store/organizations.ts";
import { createPartnerApp, upsertGrant } from "./store/partner_apps.ts";

const MIGRATIONS = new URL("./migrations/", import.meta.url);
/** What an address may fail before it is refused. */
const BURST = FAILED_LOOKUP_POLICY.requestsPerMinute;

/**
 * Counts the credential look-ups a pool sends (statements that read keys or partner apps): a
 * look-up is one such statement, whatever opens and closes the transaction around it.
 */
function lookupCounter(): { onQuery: (text: string) => void; queries: () => number } {
  let queries = 0;
  return {
    onQuery: (text) => {
      if (/\bFROM (api_keys|partner_apps|partner_grants)\b/.test(text)) queries++;
    },
    queries: () => queries,
  };
}

const tenantHeaders = (key: string): Headers => new Headers({ "x-api-key": key });
const randomKey = (): string => generateApiKey().token;

/** The error `attempt` fails with. */
async function failure(attempt: Promise<unknown>): Promise<ApiError> {
  try {
    await attempt;
  } catch (error) {
    assert(error instanceof ApiError, String(error));
    return error;
  }
  assert.fail("expected a refusal");
}

Deno.test("Authenticator: failed look-ups per address", async (t) => {
  const db = await createTestDatabase();
  const db$ = lookupCounter();
  const sql = await openDatabase(db.appUrl, "gateway", MIGRATIONS, undefined, {
    migrationUrl: db.ownerUrl,
    onQuery: db$.onQuery,
  });
  try {
    const org = await createOrganization(sql, "Guarded Print Shop");
    const known = await createApiKey(sql, org.id, null, ["quotes.read"]);
    const unused = await createApiKey(sql, org.id, null, ["quotes.read"]);
    const partner = await createPartnerApp(sql, "Guarded Connector", ["quotes.read"]);
    await upsertGrant(sql, partner.app.id, org.id, ["quotes.read"]);
    // The buckets' clock stands still: nothing refills while the test runs.
    const auth = new Authenticator(sql, {
      failedLookups: new FailedLookupLimiter(FAILED_LOOKUP_POLICY, () => 0),
      verifyPartnerToken: () =>
        Promise.resolve({ ok: true, payload: { client_id: partner.app.clientId } }),
    });
    /** Authenticates `headers` as sent from `address`. */
    const login = (headers: Headers, address: string): Promise<Principal> =>
      auth.authenticate(headers, () => address);
    const partnerHeaders = (secret: string): Headers =>
      new Headers({
        "x-api-key": partner.app.clientId,
        "x-api-secret": secret,
        authorization: "Bearer a.b.c",
        "x-service-organization-id": org.id,
      });

    await t.step(
      `${BURST} unknown keys from one address are looked up, then 429 without a query`,
      async () => {
        // The shop's key works from this address first: it is known from now on.
        assertEquals(
          (await login(tenantHeaders(known.token), "203.0.113.7")).credentialId,
          known.record.id,
        );
        const before = db$.queries();
        for (let i = 0; i < BURST; i++) {
          const refused = await failure(
            login(tenantHeaders(randomKey()), "203.0.113.7"),
          );
          assertEquals(refused.code, "unauthenticated");
        }
        assertEquals(db$.queries() - before, BURST, "one look-up per failed key");
        const afterBurst = db$.queries();
        for (let i = 0; i < 100; i++) {
          const refused = await failure(
            login(tenantHeaders(randomKey()), "203.0.113.7"),
          );
          assertEquals([refused.status, refused.code], [429, "rate_limited"]);
          // 30 a minute: the next look-up is 2 s away.
          assertEquals(refused.headers?.["Retry-After"], "2");
          assert(refused.message.includes("failed credentials from this address"), refused.message);
        }
        assertEquals(db$.queries(), afterBurst, "no look-up once the address is limited");
      },
    );

    await t.step(
      "a key seen valid before is looked up and accepted, the address limited",
      async () => {
        // Past the 2 s cache as well: the key is looked up again.
        auth.forgetAll();
        const before = db$.queries();
        const principal = await login(tenantHeaders(known.token), "203.0.113.7");
        assertEquals(principal.credentialId, known.record.id);
        assertEquals(db$.queries() - before, 1);
      },
    );

    await t.step("a key not seen before waits like any guess from that address", async () => {
      const refused = await failure(login(tenantHeaders(unused.token), "203.0.113.7"));
      assertEquals(refused.status, 429);
      // From elsewhere it is a key like any other.
      const principal = await login(tenantHeaders(unused.token), "198.51.100.1");
      assertEquals(principal.credentialId, unused.record.id);
    });

    await t.step("another address is unaffected", async () => {
      const refused = await failure(login(tenantHeaders(randomKey()), "198.51.100.2"));
      assertEquals(refused.code, "unauthenticated");
    });

    await t.step(
      "successes cost nothing: a valid key is accepted any number of times",
      async () => {
        for (let i = 0; i < BURST * 2; i++) {
          auth.forgetAll();
          await login(tenantHeaders(unused.token), "198.51.100.3");
        }
        const refused = await failure(
          login(tenantHeaders(randomKey()), "198.51.100.3"),
        );
        assertEquals(refused.code, "unauthenticated", "the address has its whole burst left");
      },
    );

    await t.step("a wrong partner client secret is a failed look-up too", async () => {
      const address = "192.0.2.10";
      assertEquals(
        (await login(partnerHeaders(partner.clientSecret), address)).credentialId,
        partner.app.id,
      );
      for (let i = 0; i < BURST; i++) {
        const refused = await failure(login(partnerHeaders(`pcs_wrong${i}`), address));
        assertEquals(refused.code, "unauthenticated");
      }
      const before = db$.queries();
      const refused = await failure(login(partnerHeaders("pcs_wrong"), address));
      assertEquals([refused.status, refused.headers?.["Retry-After"]], [429, "2"]);
      assertEquals(db$.queries(), before, "no look-up");
      // The app's own secret has worked here before: still accepted.
      auth.forgetAll();
      assertEquals(
        (await login(partnerHeaders(partner.clientSecret), address)).credentialId,
        partner.app.id,
      );
    });

    await t.step(
      "a key revoked since it was seen gets its 401 from a limited address",
      async () => {
        await revokeApiKey(sql, known.record.id);
        auth.forgetAll();
        const refused = await failure(login(tenantHeaders(known.token), "203.0.113.7"));
        assertEquals([refused.status, refused.code], [401, "unauthenticated"]);
      },
    );
  } finally {
    await sql.end();
    await db.drop();
  }
});
