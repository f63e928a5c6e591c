import assert from "node:assert/strict";
import { Hono } from "hono";
import { z } from "zod";
import { errorToResponse } from "@printshop/shared/service-defaults";
import { ok } from "./envelope.ts";
import { readBody, readQuery, readUuidParam } from "./validation.ts";
import type { Envelope } from "@printshop/shared/testing";

const Address = z.strictObject({ city: z.string(), zip: z.string().optional() });
const Body = z.strictObject({
  name: z.string().optional(),
  address: Address.optional(),
  lines: z.array(z.strictObject({ quantity: z.int().min(1, "Must be at least 1") })).optional(),
});
const Query = z.strictObject({ limit: z.string().optional(), sort: z.string().optional() });

function app(): Hono {
  const app = new Hono();
  app.post("/things", async (c) => ok(c, await readBody(c, Body)));
  app.get("/things", (c) => ok(c, readQuery(c, Query)));
  app.get("/things/:thingId", (c) => ok(c, { id: readUuidParam(c, "thingId") }));
  app.onError((error, c) => errorToResponse(error, c));
  return app;
}

async function post(body: string | undefined): Promise<{ status: number; body: Envelope }> {
  const response = await app().request("/things", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
  });
  return { status: response.status, body: await response.json() };
}

async function get(path: string): Promise<{ status: number; body: Envelope }> {
  const response = await app().request(path);
  return { status: response.status, body: await response.json() };
}

Deno.test("readBody() refuses an unknown field with a 400 naming it", async () => {
  const { status, body } = await post(JSON.stringify({ name: "x", colour: "red" }));
  assert.equal(status, 400);
  assert.equal(body.error, "validation_error");
  assert.equal(body.status, false);
  assert.deepEqual(body.details, [{ path: "colour", message: 'Unknown field "colour"' }]);
  assert.match(body.message, /^Invalid request body: "colour" unknown field "colour"$/);
});

Deno.test("readBody() joins a nested path with dots", async (t) => {
  await t.step("a wrong type inside an object", async () => {
    const { status, body } = await post(JSON.stringify({ address: { city: 7 } }));
    assert.equal(status, 400);
    assert.equal(body.error, "validation_error");
    assert.deepEqual(body.details?.map((d) => d.path), ["address.city"]);
    assert.match(body.message, /"address\.city"/);
  });

  await t.step("an unknown field inside an object", async () => {
    const { body } = await post(JSON.stringify({ address: { city: "Leeds", county: "Y" } }));
    assert.deepEqual(body.details, [{ path: "address.county", message: 'Unknown field "county"' }]);
  });

  await t.step("an array index is a path segment", async () => {
    const { body } = await post(JSON.stringify({ lines: [{ quantity: 1 }, { quantity: 0 }] }));
    assert.deepEqual(body.details, [{ path: "lines.1.quantity", message: "Must be at least 1" }]);
  });

  await t.step("every problem is listed, the message counts the rest", async () => {
    const { body } = await post(JSON.stringify({ name: 1, extra: true, address: {} }));
    assert.deepEqual(body.details?.map((d) => d.path).sort(), ["address.city", "extra", "name"]);
    assert.match(body.message, /\(and 2 more\)$/);
  });
});

Deno.test("readBody() answers malformed JSON with 400 invalid_json, not 500", async () => {
  for (const text of ["{", '{"name": }', "{'name': 'x'}", "undefined", "{}garbage"]) {
    const { status, body } = await post(text);
    assert.equal(status, 400, text);
    assert.deepEqual(body, {
      error: "invalid_json",
      message: "Request body is not valid JSON",
      status: false,
    }, text);
  }
});

Deno.test("readBody() counts an empty body as {}", async () => {
  for (const text of [undefined, "", "  \n\t "]) {
    const { status, body } = await post(text);
    assert.equal(status, 200, JSON.stringify(text));
    assert.deepEqual(body, { status: true, message: "OK", data: {} });
  }
});

Deno.test("readBody() refuses JSON that is not an object as a validation error", async () => {
  for (const text of ["null", "[]", '"text"', "42"]) {
    const { status, body } = await post(text);
    assert.equal(status, 400, text);
    assert.equal(body.error, "validation_error", text);
  }
});

Deno.test("readQuery() refuses unknown and repeated parameters", async (t) => {
  await t.step("known parameters pass through", async () => {
    const { status, body } = await get("/things?limit=5&sort=name");
    assert.equal(status, 200);
    assert.deepEqual(body.data, { limit: "5", sort: "name" });
  });

  await t.step("an unknown parameter is named", async () => {
    const { status, body } = await get("/things?limit=5&limt=5");
    assert.equal(status, 400);
    assert.equal(body.error, "validation_error");
    assert.deepEqual(body.details, [
      { path: "limt", message: 'Unknown field "limt"; did you mean "limit"?' },
    ]);
    assert.match(body.message, /^Invalid query: "limt"/);
  });

  await t.step("a repeated parameter is named", async () => {
    const { status, body } = await get("/things?sort=name&sort=date");
    assert.equal(status, 400);
    assert.equal(body.error, "validation_error");
    assert.deepEqual(body.details, [{ path: "sort", message: "Given more than once" }]);
    assert.match(body.message, /"sort" is given more than once/);
  });

  await t.step("a parameter named like an Object property, given once, is unknown", async () => {
    // Given once, it is not repeated; it must be refused as unknown like any other typo.
    for (const name of ["constructor", "toString", "__proto__"]) {
      const { status, body } = await get(`/things?${name}=1`);
      assert.equal(status, 400, name);
      assert.deepEqual(body.details, [{ path: name, message: `Unknown field "${name}"` }], name);
    }
  });

  await t.step("a repeated parameter is refused even with an empty value", async () => {
    const { status, body } = await get("/things?sort=&sort=");
    assert.equal(status, 400);
    assert.deepEqual(body.details?.map((d) => d.path), ["sort"]);
  });
});

Deno.test("readUuidParam() refuses a non-UUID and normalises case", async (t) => {
  await t.step("not a UUID → 400 naming the parameter", async () => {
    for (const id of ["123", "not-a-uuid", "0190b1c2-3d4e-7f00-8a00-0000000000a", "facets"]) {
      const { status, body } = await get(`/things/${id}`);
      assert.equal(status, 400, id);
      assert.equal(body.error, "validation_error");
      assert.deepEqual(body.details, [{ path: "thingId", message: "Must be a UUID" }]);
      assert.match(body.message, /"thingId" must be a UUID/);
    }
  });

  await t.step("an upper-case UUID is accepted and lower-cased", async () => {
    const { status, body } = await get("/things/0190B1C2-3D4E-7F00-8A00-0000000000AA");
    assert.equal(status, 200);
    assert.deepEqual(body.data, { id: "0190b1c2-3d4e-7f00-8a00-0000000000aa" });
  });
});

Deno.test("readBody() refuses a NUL anywhere, naming where it is", async () => {
  const nested = await post(JSON.stringify({ lines: [{ quantity: 1 }, { note: "a\u0000b" }] }));
  assert.equal(nested.status, 400);
  assert.deepEqual(nested.body.details, [
    { path: "lines.1.note", message: "Must not contain NUL characters" },
  ]);
  const inKey = await post(JSON.stringify({ address: { "ci\u0000ty": "x" } }));
  assert.deepEqual(inKey.body.details?.map((d) => d.path), ["address"]);
});

Deno.test("readBody() answers input nested however deep with a 400, never a 500", async () => {
  for (const depth of [5_000, 200_000]) {
    const arrays = "[".repeat(depth) + "]".repeat(depth);
    const objects = '{"a":'.repeat(depth) + "1" + "}".repeat(depth);
    for (const text of [arrays, objects, `{"name":${arrays}}`]) {
      const { status, body } = await post(text);
      assert.equal(status, 400, `depth ${depth}`);
      assert.equal(body.error, "validation_error");
    }
  }
  const deepNul = '{"a":'.repeat(50_000) + '"\\u0000"' + "}".repeat(50_000);
  const { body } = await post(deepNul);
  assert.equal(body.details?.[0]?.path, Array(50_000).fill("a").join("."));
});

Deno.test("readBody() suggests the field a mistyped one most likely meant, at any depth", async () => {
  const typo = await post(JSON.stringify({ nmae: "x", address: { cty: "Leeds" } }));
  assert.deepEqual(typo.body.details?.sort((a, b) => a.path.localeCompare(b.path)), [
    { path: "address.city", message: 'Required: give "city"' },
    { path: "address.cty", message: 'Unknown field "cty"; did you mean "city"?' },
    { path: "nmae", message: 'Unknown field "nmae"; did you mean "name"?' },
  ]);
  const far = await post(JSON.stringify({ colour: "red" }));
  assert.deepEqual(far.body.details, [{ path: "colour", message: 'Unknown field "colour"' }]);
  const inArray = await post(JSON.stringify({ lines: [{ quantity: 1, quantty: 2 }] }));
  assert.deepEqual(inArray.body.details, [
    { path: "lines.0.quantty", message: 'Unknown field "quantty"; did you mean "quantity"?' },
  ]);
});

Deno.test("readQuery() decodes as a form would, and refuses bytes that are not UTF-8", async (t) => {
  await t.step(
    "percent-escapes, + as a space and a stray % are read as URLSearchParams does",
    async () => {
      const { status, body } = await get("/things?sort=caf%C3%A9+au+lait&limit=100%");
      assert.equal(status, 200);
      assert.deepEqual(body.data, { sort: "café au lait", limit: "100%" });
      const same = new URLSearchParams("sort=caf%C3%A9+au+lait&limit=100%");
      assert.deepEqual(body.data, Object.fromEntries(same));
    },
  );

  for (
    const [name, query] of [
      ["a lone continuation byte", "sort=%FF"],
      ["a truncated sequence", "sort=caf%C3"],
      ["an encoded surrogate", "sort=%ED%A0%80"],
      ["a bad key", "so%FFrt=1"],
    ] as const
  ) {
    await t.step(`${name} is a 400 naming the parameter`, async () => {
      const { status, body } = await get(`/things?${query}`);
      assert.equal(status, 400);
      assert.equal(body.error, "validation_error");
      assert.match(body.message, /is not UTF-8 once percent-decoded/);
      assert.equal(body.details?.[0]?.message, "Must be percent-encoded UTF-8");
    });
  }
});

Deno.test("readBody() refuses a lone surrogate in a value or a key, naming where", async () => {
  const value = await post('{"name": "Tee \\ud800"}');
  assert.equal(value.status, 400);
  assert.match(value.body.message, /unpaired surrogates/);
  assert.deepEqual(value.body.details?.map((d) => d.path), ["name"]);
  const key = await post('{"address": {"\\udc00": "x", "city": "Perth"}}');
  assert.equal(key.status, 400);
  assert.deepEqual(key.body.details?.map((d) => d.path), ["address"]);
  const paired = await post('{"name": "Tee \\ud83d\\udc55"}');
  assert.equal(paired.status, 200, "a pair (👕) is text");
  assert.equal((paired.body.data as { name: string }).name, "Tee 👕");
});
