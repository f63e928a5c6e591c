/**
 * Partner credentials end to end: a partner app authenticates with its client id and secret plus
 * an access token from an identity provider, whose key set this test serves itself on loopback,
 * and acts for one organisation that granted it scopes.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { exportJWK, generateKeyPair, type JWK, SignJWT } from "jose";
import { type Envelope, startTestStack, type TestStack } from "@printshop/shared/testing";

interface Me {
  organization: { id: string; name: string };
  credential: { kind: string; id: string };
  scopes: string[];
}

interface PartnerAppCreated {
  id: string;
  clientId: string;
  clientSecret: string;
  scopes: string[];
}

const ISSUER = "https://idp.test/";
const AUDIENCE = "printshop-api";
const JWKS_PATH = "/.well-known/jwks.json";

const body = async <T = Record<string, unknown>>(res: Response): Promise<Envelope<T>> =>
  await res.json() as Envelope<T>;

async function expectError(res: Response, status: number, code: string): Promise<Envelope> {
  const envelope = await body(res);
  assertEquals([res.status, envelope.error, envelope.status], [status, code, false]);
  assert(typeof envelope.message === "string" && envelope.message.length > 0);
  return envelope;
}

/** 401 unauthenticated whose challenge tells an OAuth client that its token was refused. */
async function expectInvalidToken(
  res: Response,
  label: string,
  because?: string,
): Promise<Envelope> {
  const challenge = res.headers.get("www-authenticate") ?? "";
  const envelope = await body(res);
  assertEquals(
    [res.status, envelope.error, envelope.status],
    [401, "unauthenticated", false],
    `${label}: ${JSON.stringify(envelope)}`,
  );
  assert(
    challenge.includes('error="invalid_token"'),
    `${label}: WWW-Authenticate was ${JSON.stringify(challenge)}`,
  );
  if (because !== undefined) {
    assert(envelope.message.includes(because), `${label}: refused for ${envelope.message}`);
  }
  return envelope;
}

const base64UrlJson = (value: unknown): string =>
  btoa(JSON.stringify(value)).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");

const nowSeconds = (): number => Math.floor(Date.now() / 1000);

Deno.test("partner apps act for an organisation with an identity provider's tokens", async (t) => {
  // The identity provider: an RS256 and an ES256 signing key, published as a JWKS.
  const rsa = await generateKeyPair("RS256");
  const ec = await generateKeyPair("ES256");
  const rsaPublic: JWK = {
    ...await exportJWK(rsa.publicKey),
    kid: "rsa-1",
    alg: "RS256",
    use: "sig",
  };
  const ecPublic: JWK = { ...await exportJWK(ec.publicKey), kid: "ec-1", alg: "ES256", use: "sig" };
  let jwksFetches = 0;
  await using jwks = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    (request) => {
      if (new URL(request.url).pathname !== JWKS_PATH) return new Response(null, { status: 404 });
      jwksFetches++;
      return Response.json({ keys: [rsaPublic, ecPublic] });
    },
  );
  const jwksUrl = `http://127.0.0.1:${jwks.addr.port}${JWKS_PATH}`;

  await using stack: TestStack = await startTestStack({
    processEnv: {
      gateway: {
        PARTNER_JWKS_URL: jwksUrl,
        PARTNER_TOKEN_ISSUER: ISSUER,
        PARTNER_TOKEN_AUDIENCE: AUDIENCE,
      },
    },
  });

  const shop = await stack.tenant(undefined, "Partnered Print Shop");
  const otherShop = await stack.tenant(undefined, "Unpartnered Print Shop");
  const partner = (await stack.admin<Envelope<PartnerAppCreated>>("POST", "/admin/partner-apps", {
    name: "Storefront Connector",
    scopes: ["quotes.read", "quotes.write", "customers.read"],
  })).data;
  assert(partner.clientId.length > 0 && partner.clientSecret.length > 0);
  const otherPartner = (await stack.admin<Envelope<PartnerAppCreated>>(
    "POST",
    "/admin/partner-apps",
    { name: "Another Connector", scopes: ["quotes.read"] },
  )).data;
  await stack.admin("POST", `/admin/partner-apps/${partner.id}/grants`, {
    organizationId: shop.organizationId,
    scopes: ["quotes.read", "quotes.write"],
  });

  /** A signed token; claims given as `undefined` are left out. */
  const mint = (
    claims: Record<string, unknown> = {},
    signing: { alg?: string; kid?: string; key?: CryptoKey } = {},
  ): Promise<string> => {
    const alg = signing.alg ?? "RS256";
    const key = signing.key ?? (alg === "ES256" ? ec.privateKey : rsa.privateKey);
    const kid = signing.kid ?? (alg === "ES256" ? "ec-1" : "rsa-1");
    const now = nowSeconds();
    return new SignJWT({
      iss: ISSUER,
      aud: AUDIENCE,
      iat: now,
      exp: now + 300,
      jti: crypto.randomUUID(),
      client_id: partner.clientId,
      ...claims,
    }).setProtectedHeader({ alg, kid, typ: "JWT" }).sign(key);
  };

  const partnerCall = (
    token: string | null,
    method: string,
    path: string,
    options: {
      clientId?: string;
      clientSecret?: string;
      organizationId?: string | null;
      body?: unknown;
    } = {},
  ): Promise<Response> => {
    const headers: Record<string, string> = {
      "x-api-secret": options.clientSecret ?? partner.clientSecret,
    };
    if (token !== null) headers.authorization = `Bearer ${token}`;
    const organizationId = options.organizationId === undefined
      ? shop.organizationId
      : options.organizationId;
    if (organizationId !== null) headers["x-service-organization-id"] = organizationId;
    return stack.call(options.clientId ?? partner.clientId, method, path, options.body, headers);
  };

  const me = async (res: Response): Promise<Me> => {
    const envelope = await body<Me>(res);
    assertEquals(res.status, 200, JSON.stringify(envelope));
    return envelope.data;
  };

  let quoteId = "";

  await t.step(
    "a valid RS256 token: GET /v1/me describes the partner acting for the org",
    async () => {
      const caller = await me(await partnerCall(await mint(), "GET", "/v1/me"));
      assertEquals(caller.credential, { kind: "partner", id: partner.id });
      assertEquals(caller.organization.id, shop.organizationId);
      assertEquals(caller.organization.name, "Partnered Print Shop");
      assertEquals(caller.scopes, ["quotes.read", "quotes.write"]);
      assert(jwksFetches >= 1, "the gateway fetched the JWKS");
    },
  );

  await t.step("a valid ES256 token is accepted too", async () => {
    const caller = await me(await partnerCall(await mint({}, { alg: "ES256" }), "GET", "/v1/me"));
    assertEquals(caller.credential, { kind: "partner", id: partner.id });
    assertEquals(caller.organization.id, shop.organizationId);
  });

  await t.step(
    "a quote the partner creates belongs to the org: its tenant key sees it, another org's does not",
    async () => {
      const created = await partnerCall(await mint(), "POST", "/v1/quotes", {
        body: { reference: "PARTNER-1", salesRepEmail: "bot@partner.test" },
      });
      const envelope = await body(created);
      assertEquals(created.status, 201, JSON.stringify(envelope));
      quoteId = envelope.data.id as string;
      const own = await stack.call(shop.apiKey, "GET", `/v1/quotes/${quoteId}`);
      const quote = await body(own);
      assertEquals(own.status, 200);
      assertEquals(quote.data.reference, "PARTNER-1");
      await expectError(
        await stack.call(otherShop.apiKey, "GET", `/v1/quotes/${quoteId}`),
        404,
        "not_found",
      );
      const viaPartner = await partnerCall(await mint(), "GET", `/v1/quotes/${quoteId}`);
      assertEquals(viaPartner.status, 200);
      await viaPartner.body?.cancel();
    },
  );

  await t.step("the client may be named by `azp` instead of `client_id`", async () => {
    const token = await mint({ client_id: undefined, azp: partner.clientId });
    const caller = await me(await partnerCall(token, "GET", "/v1/me"));
    assertEquals(caller.credential, { kind: "partner", id: partner.id });
  });

  await t.step(
    "also accepted: nbf within the 5 s clock tolerance, aud as a list, an upper-case org id",
    async () => {
      const early = await mint({ nbf: nowSeconds() + 2 });
      assertEquals((await me(await partnerCall(early, "GET", "/v1/me"))).credential.id, partner.id);
      const audiences = await mint({ aud: ["https://other.test/", AUDIENCE] });
      assertEquals(
        (await me(await partnerCall(audiences, "GET", "/v1/me"))).credential.id,
        partner.id,
      );
      const upper = await me(
        await partnerCall(await mint(), "GET", "/v1/me", {
          organizationId: shop.organizationId.toUpperCase(),
        }),
      );
      assertEquals(upper.organization.id, shop.organizationId);
    },
  );

  await t.step(
    'refused tokens are 401 with error="invalid_token": expired, early, wrong aud/iss, no exp',
    async () => {
      const now = nowSeconds();
      const cases: [string, Record<string, unknown>, string][] = [
        ["expired", { iat: now - 600, exp: now - 60 }, "expired"],
        ["nbf in the future beyond the tolerance", { nbf: now + 120 }, '"nbf"'],
        ["wrong audience", { aud: "someone-else" }, '"aud"'],
        ["wrong issuer", { iss: "https://evil.test/" }, '"iss"'],
        ["no exp claim", { exp: undefined }, '"exp"'],
      ];
      for (const [label, claims, because] of cases) {
        const res = await partnerCall(await mint(claims), "GET", "/v1/me");
        await expectInvalidToken(res, label, because);
      }
    },
  );

  await t.step("a token naming a key id the JWKS does not have is 401 invalid_token", async () => {
    const token = await mint({}, { kid: "no-such-key" });
    await expectInvalidToken(
      await partnerCall(token, "GET", "/v1/me"),
      "unknown kid",
      "signing key is unknown",
    );
  });

  await t.step(
    "a token signed by a foreign key that reuses a known kid fails its signature check",
    async () => {
      const impostor = await generateKeyPair("RS256");
      const rsaForged = await mint({}, { key: impostor.privateKey, kid: "rsa-1" });
      await expectInvalidToken(
        await partnerCall(rsaForged, "GET", "/v1/me"),
        "forged RS256",
        "signature",
      );
      const ecImpostor = await generateKeyPair("ES256");
      const ecForged = await mint({}, { alg: "ES256", key: ecImpostor.privateKey, kid: "ec-1" });
      await expectInvalidToken(
        await partnerCall(ecForged, "GET", "/v1/me"),
        "forged ES256",
        "signature",
      );
    },
  );

  await t.step("a token issued to another client is 401 invalid_token", async () => {
    const foreign = await mint({ client_id: otherPartner.clientId });
    await expectInvalidToken(
      await partnerCall(foreign, "GET", "/v1/me"),
      "client_id of another",
      "another client",
    );
    const foreignAzp = await mint({ client_id: undefined, azp: otherPartner.clientId });
    await expectInvalidToken(
      await partnerCall(foreignAzp, "GET", "/v1/me"),
      "azp of another",
      "another client",
    );
    const anonymous = await mint({ client_id: undefined });
    await expectInvalidToken(
      await partnerCall(anonymous, "GET", "/v1/me"),
      "no client claim",
      "another client",
    );
    // The other app's own credentials with this app's token.
    await expectInvalidToken(
      await partnerCall(await mint(), "GET", "/v1/me", {
        clientId: otherPartner.clientId,
        clientSecret: otherPartner.clientSecret,
      }),
      "this app's token sent by another app",
      "another client",
    );
  });

  await t.step("unsigned (alg none) and HS256 tokens are refused", async () => {
    const now = nowSeconds();
    const claims = {
      iss: ISSUER,
      aud: AUDIENCE,
      iat: now,
      exp: now + 300,
      client_id: partner.clientId,
    };
    const unsigned = `${base64UrlJson({ alg: "none", typ: "JWT" })}.${base64UrlJson(claims)}.`;
    await expectInvalidToken(await partnerCall(unsigned, "GET", "/v1/me"), "alg none", "algorithm");
    const unsignedWithKid = `${base64UrlJson({ alg: "none", kid: "rsa-1" })}.${
      base64UrlJson(claims)
    }.`;
    await expectInvalidToken(
      await partnerCall(unsignedWithKid, "GET", "/v1/me"),
      "alg none+kid",
      "algorithm",
    );
    // The classic confusion attack: HMAC keyed with the public key everybody can download.
    const publicKeyAsSecret = new TextEncoder().encode(JSON.stringify(rsaPublic));
    const hs256 = await new SignJWT(claims).setProtectedHeader({ alg: "HS256", kid: "rsa-1" })
      .sign(publicKeyAsSecret);
    await expectInvalidToken(await partnerCall(hs256, "GET", "/v1/me"), "HS256", "algorithm");
    const hs256NoKid = await new SignJWT(claims).setProtectedHeader({ alg: "HS256" })
      .sign(new TextEncoder().encode(partner.clientSecret));
    await expectInvalidToken(
      await partnerCall(hs256NoKid, "GET", "/v1/me"),
      "HS256 client secret",
      "algorithm",
    );
  });

  await t.step("a wrong client secret or an unknown client id is 401", async () => {
    const token = await mint();
    const wrongSecret = await partnerCall(token, "GET", "/v1/me", {
      clientSecret: `${partner.clientSecret.slice(0, -4)}AAAA`,
    });
    assert(wrongSecret.headers.get("www-authenticate")?.startsWith("Bearer"));
    await expectError(wrongSecret, 401, "unauthenticated");
    await expectError(
      await partnerCall(token, "GET", "/v1/me", { clientSecret: "" }),
      401,
      "unauthenticated",
    );
    await expectError(
      await partnerCall(token, "GET", "/v1/me", { clientId: "pca_doesnotexist0000000" }),
      401,
      "unauthenticated",
    );
    // Another app's secret does not unlock this app.
    await expectError(
      await partnerCall(token, "GET", "/v1/me", { clientSecret: otherPartner.clientSecret }),
      401,
      "unauthenticated",
    );
  });

  await t.step("a partner request without an Authorization bearer token is 401", async () => {
    const missing = await partnerCall(null, "GET", "/v1/me");
    assert(missing.headers.get("www-authenticate")?.startsWith("Bearer"));
    await expectError(missing, 401, "unauthenticated");
    await expectError(
      await stack.call(partner.clientId, "GET", "/v1/me", undefined, {
        "x-api-secret": partner.clientSecret,
        "x-service-organization-id": shop.organizationId,
        authorization: `Basic ${btoa(`${partner.clientId}:${partner.clientSecret}`)}`,
      }),
      401,
      "unauthenticated",
    );
  });

  await t.step(
    "without X-Service-Organization-Id the request is 400 validation_error",
    async () => {
      const missing = await expectError(
        await partnerCall(await mint(), "GET", "/v1/me", { organizationId: null }),
        400,
        "validation_error",
      );
      assertEquals(missing.details?.[0]?.path, "X-Service-Organization-Id");
      await expectError(
        await partnerCall(await mint(), "GET", "/v1/me", { organizationId: "not-a-uuid" }),
        400,
        "validation_error",
      );
    },
  );

  await t.step(
    "an organisation that granted the app nothing is 403 organization_not_allowed",
    async () => {
      await expectError(
        await partnerCall(await mint(), "GET", "/v1/me", {
          organizationId: otherShop.organizationId,
        }),
        403,
        "organization_not_allowed",
      );
      await expectError(
        await partnerCall(await mint(), "GET", `/v1/quotes/${quoteId}`, {
          organizationId: otherShop.organizationId,
        }),
        403,
        "organization_not_allowed",
      );
      // Another app has no grant for the partnered shop either.
      await expectError(
        await partnerCall(await mint({ client_id: otherPartner.clientId }), "GET", "/v1/me", {
          clientId: otherPartner.clientId,
          clientSecret: otherPartner.clientSecret,
        }),
        403,
        "organization_not_allowed",
      );
    },
  );

  await t.step("effective scopes are app ∩ grant ∩ the token's scope claim", async () => {
    const narrowed = await mint({ scope: "quotes.read customers.read" });
    // customers.read is in the app and the token, but the organisation did not grant it.
    assertEquals((await me(await partnerCall(narrowed, "GET", "/v1/me"))).scopes, ["quotes.read"]);
    const write = await expectError(
      await partnerCall(narrowed, "POST", "/v1/quotes", { body: { reference: "NOPE" } }),
      403,
      "insufficient_scope",
    );
    assert(write.message.includes("quotes.write"));
    const read = await partnerCall(narrowed, "GET", `/v1/quotes/${quoteId}`);
    assertEquals(read.status, 200);
    await read.body?.cancel();
    // Without a scope claim the token adds no narrowing.
    assertEquals(
      (await me(await partnerCall(await mint(), "GET", "/v1/me"))).scopes,
      ["quotes.read", "quotes.write"],
    );
    // A scope the app was never registered with is not gained by asking for it.
    const greedy = await mint({ scope: "quotes.read quotes.write costs.read customers.write" });
    assertEquals(
      (await me(await partnerCall(greedy, "GET", "/v1/me"))).scopes,
      ["quotes.read", "quotes.write"],
    );
    // An empty scope claim leaves nothing.
    const empty = await mint({ scope: "" });
    assertEquals((await me(await partnerCall(empty, "GET", "/v1/me"))).scopes, []);
    // A scope claim that is not a string is malformed and grants nothing, rather than nothing
    // being narrowed.
    const listed = await mint({ scope: ["quotes.read", "quotes.write"] });
    assertEquals((await me(await partnerCall(listed, "GET", "/v1/me"))).scopes, []);
  });

  await t.step("the bearer scheme name is case-insensitive", async () => {
    const token = await mint();
    const res = await stack.call(partner.clientId, "GET", "/v1/me", undefined, {
      "x-api-secret": partner.clientSecret,
      authorization: `bearer ${token}`,
      "x-service-organization-id": shop.organizationId,
    });
    assertEquals((await me(res)).credential.kind, "partner");
  });

  await t.step(
    "a flood of unknown key ids refetches the JWKS at most twice, then valid tokens still verify",
    async () => {
      const before = jwksFetches;
      const unknownKid = async (i: number): Promise<void> => {
        const token = await mint({}, { kid: `made-up-${i}-${crypto.randomUUID()}` });
        await expectInvalidToken(
          await partnerCall(token, "GET", "/v1/me"),
          `unknown kid #${i}`,
          "signing key is unknown",
        );
      };
      // One after another, then all at once.
      for (let i = 0; i < 10; i++) await unknownKid(i);
      await Promise.all(Array.from({ length: 10 }, (_, i) => unknownKid(10 + i)));
      assert(
        jwksFetches - before <= 2,
        `the JWKS was fetched ${jwksFetches - before} times for 20 unknown key ids`,
      );
      const after = await me(await partnerCall(await mint(), "GET", "/v1/me"));
      assertEquals(after.credential, { kind: "partner", id: partner.id });
      const ecAfter = await me(
        await partnerCall(await mint({}, { alg: "ES256" }), "GET", "/v1/me"),
      );
      assertEquals(ecAfter.credential, { kind: "partner", id: partner.id });
    },
  );

  await t.step(
    "narrowing a grant takes effect at once on the gateway that changed it, cached or not",
    async () => {
      const token = await mint();
      assertEquals(
        (await me(await partnerCall(token, "GET", "/v1/me"))).scopes,
        ["quotes.read", "quotes.write"],
      );
      const updated = await stack.admin<Envelope<{ scopes: string[] }>>(
        "POST",
        `/admin/partner-apps/${partner.id}/grants`,
        { organizationId: shop.organizationId, scopes: ["quotes.read"] },
      );
      assertEquals(updated.data.scopes, ["quotes.read"]);
      assertEquals((await me(await partnerCall(token, "GET", "/v1/me"))).scopes, ["quotes.read"]);
      await expectError(
        await partnerCall(token, "POST", "/v1/quotes", { body: {} }),
        403,
        "insufficient_scope",
      );
    },
  );
});
