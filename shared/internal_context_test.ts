import { createHmac } from "node:crypto";
import assert from "node:assert/strict";
import {
  importContextKey,
  INTERNAL_CONTEXT_MAX_AGE_MS,
  type InternalContext,
  signInternalContext,
  verifyInternalContext,
} from "./internal_context.ts";
import { ALL_SCOPES } from "./scopes.ts";

const SECRET = "internal-secret-for-tests-0123456789abcdef";
const METHOD = "POST";
const PATH = "/v1/quotes/0190b1c2-0000-7000-8000-000000000001/groups";

function context(overrides: Partial<InternalContext> = {}): InternalContext {
  return {
    organizationId: "0190b1c2-0000-7000-8000-0000000000aa",
    credentialKind: "tenant_key",
    credentialId: "0190b1c2-0000-7000-8000-0000000000bb",
    scopes: ["quotes.read", "quotes.write"],
    requestId: "req-123",
    issuedAt: Date.now(),
    ...overrides,
  };
}

function base64Url(text: string): string {
  return btoa(text).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

function fromBase64Url(text: string): string {
  return atob(
    text.replaceAll("-", "+").replaceAll("_", "/") + "=".repeat((4 - text.length % 4) % 4),
  );
}

Deno.test("verifyInternalContext() accepts what signInternalContext() produced", async (t) => {
  const key = await importContextKey(SECRET);

  await t.step("the context comes back unchanged", async () => {
    const sent = context({ credentialKind: "partner", scopes: ["proofs.approve"] });
    const header = await signInternalContext(key, METHOD, PATH, sent);
    const result = await verifyInternalContext(key, METHOD, PATH, header);
    assert.deepEqual(result, { ok: true, context: sent });
  });

  await t.step("the header is two base64url parts, safe to put in an HTTP header", async () => {
    const header = await signInternalContext(key, METHOD, PATH, context({ requestId: "ü?/+=" }));
    assert.match(header, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
  });

  await t.step("the method's case does not matter", async () => {
    const header = await signInternalContext(key, "post", PATH, context());
    assert.equal((await verifyInternalContext(key, "POST", PATH, header)).ok, true);
  });

  await t.step(
    "a key imported from the same secret verifies it (gateway and service)",
    async () => {
      const header = await signInternalContext(key, METHOD, PATH, context());
      const serviceKey = await importContextKey(SECRET);
      assert.equal((await verifyInternalContext(serviceKey, METHOD, PATH, header)).ok, true);
    },
  );
});

Deno.test("verifyInternalContext() refuses a forged or tampered header as bad_signature", async (t) => {
  const key = await importContextKey(SECRET);
  const header = await signInternalContext(key, METHOD, PATH, context());
  const [payload, mac] = header.split(".") as [string, string];

  await t.step("signed with another secret", async () => {
    const otherKey = await importContextKey("another-secret-of-at-least-32-characters!");
    const forged = await signInternalContext(otherKey, METHOD, PATH, context());
    assert.deepEqual(await verifyInternalContext(key, METHOD, PATH, forged), {
      ok: false,
      reason: "bad_signature",
    });
  });

  await t.step("a made-up signature of the right length", async () => {
    const fake = base64Url(String.fromCharCode(...new Uint8Array(32)));
    assert.deepEqual(await verifyInternalContext(key, METHOD, PATH, `${payload}.${fake}`), {
      ok: false,
      reason: "bad_signature",
    });
  });

  await t.step(
    "the payload altered after signing (more scopes, another organisation)",
    async () => {
      const original = JSON.parse(fromBase64Url(payload)) as InternalContext;
      for (
        const altered of [
          { ...original, scopes: [...original.scopes, "costs.read"] },
          { ...original, organizationId: "0190b1c2-0000-7000-8000-0000000000cc" },
        ]
      ) {
        const tampered = `${base64Url(JSON.stringify(altered))}.${mac}`;
        assert.deepEqual(await verifyInternalContext(key, METHOD, PATH, tampered), {
          ok: false,
          reason: "bad_signature",
        });
      }
    },
  );

  await t.step("replayed with another method", async () => {
    assert.deepEqual(await verifyInternalContext(key, "GET", PATH, header), {
      ok: false,
      reason: "bad_signature",
    });
  });

  await t.step("replayed against another path", async () => {
    for (const path of ["/v1/quotes", `${PATH}/`, PATH.replace("0001", "0002")]) {
      assert.deepEqual(await verifyInternalContext(key, METHOD, path, header), {
        ok: false,
        reason: "bad_signature",
      }, path);
    }
  });
});

Deno.test("verifyInternalContext() refuses a stale or future issuedAt as stale", async (t) => {
  const key = await importContextKey(SECRET);
  const now = 1_750_000_000_000;
  const at = async (issuedAt: number) =>
    await verifyInternalContext(
      key,
      METHOD,
      PATH,
      await signInternalContext(key, METHOD, PATH, context({ issuedAt })),
      now,
    );

  await t.step("older than the maximum age", async () => {
    assert.deepEqual(await at(now - INTERNAL_CONTEXT_MAX_AGE_MS - 1), {
      ok: false,
      reason: "stale",
    });
    assert.deepEqual(await at(now - 10 * INTERNAL_CONTEXT_MAX_AGE_MS), {
      ok: false,
      reason: "stale",
    });
  });

  await t.step("from further in the future than the maximum age", async () => {
    assert.deepEqual(await at(now + INTERNAL_CONTEXT_MAX_AGE_MS + 1), {
      ok: false,
      reason: "stale",
    });
  });

  await t.step("within the window either way it is accepted", async () => {
    assert.equal((await at(now - INTERNAL_CONTEXT_MAX_AGE_MS)).ok, true);
    assert.equal((await at(now - 1_000)).ok, true);
    assert.equal((await at(now + 1_000)).ok, true);
  });

  await t.step("a signed context without a numeric issuedAt is stale", async () => {
    const noTime = { ...context() } as Partial<InternalContext>;
    delete noTime.issuedAt;
    const header = await signInternalContext(key, METHOD, PATH, noTime as InternalContext);
    assert.deepEqual(await verifyInternalContext(key, METHOD, PATH, header, now), {
      ok: false,
      reason: "stale",
    });
    const textTime = await signInternalContext(
      key,
      METHOD,
      PATH,
      context({ issuedAt: String(now) as unknown as number }),
    );
    assert.deepEqual(await verifyInternalContext(key, METHOD, PATH, textTime, now), {
      ok: false,
      reason: "stale",
    });
  });
});

Deno.test("verifyInternalContext() refuses a missing or malformed header", async (t) => {
  const key = await importContextKey(SECRET);
  const header = await signInternalContext(key, METHOD, PATH, context());
  const [payload, mac] = header.split(".") as [string, string];

  await t.step("missing", async () => {
    for (const value of [undefined, null, ""]) {
      assert.deepEqual(await verifyInternalContext(key, METHOD, PATH, value), {
        ok: false,
        reason: "missing",
      });
    }
  });

  await t.step("not two dot-separated parts", async () => {
    for (const value of [payload, `${header}.`, `${header}.extra`, "a.b.c"]) {
      assert.deepEqual(await verifyInternalContext(key, METHOD, PATH, value), {
        ok: false,
        reason: "malformed",
      }, value);
    }
  });

  await t.step("a signature that is not base64url", async () => {
    for (const badMac of ["not base64!", `${mac}=`, "a+b/", "x"]) {
      assert.deepEqual(await verifyInternalContext(key, METHOD, PATH, `${payload}.${badMac}`), {
        ok: false,
        reason: "malformed",
      }, badMac);
    }
  });

  await t.step(
    "base64url with whitespace or padding in it, which a lenient decoder skips",
    async () => {
      // Each spelling of a value is refused but one: a decoder that skipped these characters
      // would accept a header no signer wrote.
      const variants = [
        `${payload.slice(0, 8)} ${payload.slice(8)}.${mac}`,
        `${payload.slice(0, 8)}\n${payload.slice(8)}.${mac}`,
        `${payload}==.${mac}`,
        `${payload}.${mac.slice(0, 4)} ${mac.slice(4)}`,
        `${payload}.${mac.slice(0, -2)}==`,
      ];
      for (const value of variants) {
        assert.deepEqual(await verifyInternalContext(key, METHOD, PATH, value), {
          ok: false,
          reason: "malformed",
        }, value);
      }
    },
  );

  await t.step("a correctly signed payload that is not JSON", async () => {
    // Only the key holder can produce this; it must still be refused cleanly, not throw.
    const garbage = base64Url("{not json");
    const sig = new Uint8Array(
      createHmac("sha256", key.secret).update(`${METHOD}\n${PATH}\n${garbage}`).digest(),
    );
    const value = `${garbage}.${base64Url(String.fromCharCode(...sig))}`;
    assert.deepEqual(await verifyInternalContext(key, METHOD, PATH, value), {
      ok: false,
      reason: "malformed",
    });
  });
});

Deno.test("the signature is HMAC-SHA256 over method, target and payload, for any secret length", async () => {
  // The MAC is computed from the key's hashed pads; it must stay the HMAC every service checks.
  for (const secret of [SECRET, "s".repeat(64), "a much longer secret ".repeat(8)]) {
    const key = await importContextKey(secret);
    const header = await signInternalContext(key, METHOD, PATH, context());
    const [payload, mac] = header.split(".") as [string, string];
    const expected = createHmac("sha256", secret).update(`${METHOD}\n${PATH}\n${payload}`)
      .digest("base64url");
    assert.equal(mac, expected, `a secret of ${secret.length} characters`);
  }
});

Deno.test("scopes travel as a bit set over ALL_SCOPES, and come back as the same set", async (t) => {
  const key = await importContextKey(SECRET);
  const roundTrip = async (scopes: string[]): Promise<string[]> => {
    const header = await signInternalContext(key, METHOD, PATH, context({ scopes }));
    const result = await verifyInternalContext(key, METHOD, PATH, header);
    assert.ok(result.ok, JSON.stringify(result));
    return result.context.scopes;
  };
  const signed = (payload: unknown): string => {
    const text = base64Url(JSON.stringify(payload));
    const sig = new Uint8Array(
      createHmac("sha256", key.secret).update(`${METHOD}\n${PATH}\n${text}`).digest(),
    );
    return `${text}.${base64Url(String.fromCharCode(...sig))}`;
  };

  await t.step("every scope, none, and a few given in another order", async () => {
    assert.deepEqual(await roundTrip([...ALL_SCOPES]), [...ALL_SCOPES]);
    assert.deepEqual(await roundTrip([]), []);
    // In ALL_SCOPES's order: a set, not a list (nothing reads its order).
    assert.deepEqual(await roundTrip(["costs.read", "quotes.read", "quotes.read"]), [
      "quotes.read",
      "costs.read",
    ]);
    // Decoded once and then shared: a caller changing its copy changes nobody else's.
    const first = await roundTrip(["quotes.read"]);
    first.push("quotes.write");
    assert.deepEqual(await roundTrip(["quotes.read"]), ["quotes.read"]);
  });

  await t.step("a name outside ALL_SCOPES goes as the list, unchanged", async () => {
    assert.deepEqual(await roundTrip(["quotes.read", "future.scope"]), [
      "quotes.read",
      "future.scope",
    ]);
  });

  await t.step("the header of a key with every scope is small", async () => {
    const header = await signInternalContext(
      key,
      METHOD,
      PATH,
      context({
        scopes: [...ALL_SCOPES],
        organizationName: "Harness Print Co",
        publicUrl: "http://127.0.0.1:8080",
      }),
    );
    // With the 20 names written out it was 888 bytes.
    assert.ok(header.length < 520, `${header.length} bytes`);
  });

  await t.step("signed scopes that are no set of ALL_SCOPES are malformed", async () => {
    const base = { ...context(), scopes: undefined };
    const tooHigh = (2 ** ALL_SCOPES.length).toString(36);
    for (const scopes of [undefined, 12, "", "Z1", "zzzzzzzz", tooHigh, ["quotes.read", 7], null]) {
      assert.deepEqual(
        await verifyInternalContext(key, METHOD, PATH, signed({ ...base, scopes })),
        { ok: false, reason: "malformed" },
        JSON.stringify(scopes),
      );
    }
    assert.deepEqual(
      await verifyInternalContext(key, METHOD, PATH, signed(5)),
      { ok: false, reason: "malformed" },
    );
  });
});
