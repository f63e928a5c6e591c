import assert from "node:assert/strict";
import { Hono } from "hono";
import { z } from "zod";
import { errorToResponse } from "@printshop/shared/service-defaults";
import { ok } from "./envelope.ts";
import { readBody, readQuery, readUuidParam, validate } from "./validation.ts";
import type { Envelope } from "@printshop/shared/testing";
import { DateTime, Email, IsoDate, Uuid } from "../contracts/common.ts";
import { Filter } from "../contracts/filters.ts";
import { CustomerTier, CustomFieldValues } from "../contracts/crm/values.ts";
import {
  Amount,
  Flag,
  MarkupValue,
  OptionalText,
  Quantity,
  Url,
} from "../contracts/quotes/values.ts";

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
    assert.deepEqual(body.details, [
      { path: "address.city", message: "Expected a string, got a number" },
    ]);
    assert.equal(
      body.message,
      'Invalid request body: "address.city" expected a string, got a number',
    );
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

/** The details of the 400 a body gets from a route that reads it with `schema`. */
async function refusal(schema: z.ZodType, value: unknown): Promise<Envelope["details"]> {
  const app = new Hono();
  app.post("/", async (c) => ok(c, await readBody(c, schema)));
  app.onError((error, c) => errorToResponse(error, c));
  const response = await app.request("/", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(value),
  });
  const body = await response.json() as Envelope;
  assert.equal(response.status, 400, JSON.stringify(body));
  assert.equal(body.error, "validation_error");
  return body.details;
}

/** One field, `value`, checked by `schema`: the message its refusal gives. */
async function messageFor(schema: z.ZodType, value: unknown): Promise<string | undefined> {
  const details = await refusal(z.strictObject({ value: schema }), { value });
  assert.equal(details?.length, 1, JSON.stringify(details));
  assert.equal(details?.[0]?.path, "value");
  return details?.[0]?.message;
}

Deno.test("readBody() tells an absent field from a present one of the wrong type", async (t) => {
  const Mail = z.strictObject({ to: z.string(), cc: z.array(z.string()).optional() });

  await t.step("absent: Required, naming the field", async () => {
    assert.deepEqual(await refusal(Mail, {}), [{ path: "to", message: 'Required: give "to"' }]);
  });

  await t.step("an array for a string: what was expected and what came", async () => {
    // Read as "Required" before zod 4 issues were asked to keep their input.
    assert.deepEqual(await refusal(Mail, { to: ["a@b.co"] }), [
      { path: "to", message: "Expected a string, got an array" },
    ]);
  });

  for (
    const [what, schema, value, message] of [
      ["a string for a number", Amount(2), "12.50", "Expected a number, got a string"],
      ["null for a field that is not nullable", z.string(), null, "Expected a string, got null"],
      ["an object for an array", z.array(z.string()), {}, "Expected an array, got an object"],
      ["a number for a boolean", Flag, 1, "Expected a boolean, got a number"],
      ["a boolean for an object", Filter, true, "Expected an object, got a boolean"],
      ["a string for an integer", Quantity, "3", "Expected an integer, got a string"],
      ["a fraction for an integer", Quantity, 1.5, "Expected an integer, got 1.5"],
      [
        "a number for a nullable string",
        OptionalText(10),
        5,
        "Expected a string or null, got a number",
      ],
      [
        "a number for a UUID (its own message is about format)",
        Uuid,
        7,
        "Expected a string, got a number",
      ],
    ] as const
  ) {
    await t.step(what, async () => {
      assert.equal(await messageFor(schema, value), message);
    });
  }

  await t.step(
    "a field whose schema has a message of its own is still Required when absent",
    async () => {
      const Link = z.strictObject({ quoteId: Uuid, amount: Amount(2) });
      assert.deepEqual(await refusal(Link, {}), [
        { path: "quoteId", message: 'Required: give "quoteId"' },
        { path: "amount", message: 'Required: give "amount"' },
      ]);
    },
  );

  await t.step("a body that is not an object says what it is", async () => {
    assert.deepEqual(await refusal(Mail, ["to"]), [
      { path: "", message: "Expected an object, got an array" },
    ]);
  });

  await t.step("the value itself is never echoed, only its type", async () => {
    const secret = "sk_live_do_not_echo";
    const details = await refusal(Mail, { to: [secret], cc: secret });
    assert(!JSON.stringify(details).includes(secret), JSON.stringify(details));
  });
});

Deno.test("readBody() says what is wrong and what is accepted, for each kind of problem", async (t) => {
  const cases: [string, z.ZodType, unknown, string][] = [
    // too_small: the contract's own words win; zod's defaults are said the same way.
    ["too_small, the contract's own message", Quantity, -1, "Must not be negative"],
    ["too_small, an integer", z.int().min(1), 0, "Must be at least 1"],
    ["too_small, zero", z.int().min(0), -1, "Must not be negative"],
    ["too_small, exclusive", z.number().positive(), 0, "Must be greater than 0"],
    ["too_small, a string", z.string().min(3), "ab", "Must be at least 3 characters"],
    ["too_small, an empty array", z.array(z.string()).min(1), [], "Must not be empty"],
    // too_big
    ["too_big, a number", MarkupValue, 2_000_000, "Must be at most 1000000"],
    ["too_big, a string", Filter.shape.field, "f".repeat(101), "Must be at most 100 characters"],
    ["too_big, an array", z.array(z.string()).max(2), ["a", "b", "c"], "Must have at most 2 items"],
    [
      "too_big, a URL",
      Url,
      `https://example.com/${"a".repeat(2000)}`,
      "Must be at most 2000 characters",
    ],
    ["too_big, past every integer's range", z.int(), 1e20, "Must be at most 9007199254740991"],
    ["too_big, the field's bound before the range", Quantity, 1e20, "Must be at most 10000000"],
    // invalid_format
    ["invalid_format, uuid", Uuid, "not-a-uuid", "Must be a UUID"],
    ["invalid_format, uuid by default", z.uuid(), "not-a-uuid", "Must be a UUID"],
    ["invalid_format, email", Email, "someone", "Must be an email address"],
    ["invalid_format, url", Url, "ftp://example.com", "Must be an http(s) URL"],
    [
      "invalid_format, datetime",
      DateTime,
      "2026-01-31T09:00:00Z",
      "Must be a date and time as YYYY-MM-DDTHH:MM:SS.sssZ",
    ],
    ["invalid_format, regex with a message", IsoDate, "2026-1-31", "Must be a date as YYYY-MM-DD"],
    [
      "invalid_format, regex by default",
      z.string().regex(/^[0-9a-f]{64}$/),
      "xyz",
      'Must match the pattern "/^[0-9a-f]{64}$/"',
    ],
    ["invalid_format, starts_with", z.string().startsWith("PO-"), "X1", 'Must start with "PO-"'],
    // not_multiple_of
    ["not_multiple_of", z.number().multipleOf(0.01), 0.001, "Must be a multiple of 0.01"],
    // invalid_value
    [
      "invalid_value, an enum with a message",
      CustomerTier,
      "platinum",
      "Must be one of standard, bronze, silver, gold, wholesale",
    ],
    [
      "invalid_value, an enum by default",
      z.enum(["asc", "desc"]),
      "up",
      'Must be one of "asc", "desc"',
    ],
    ["invalid_value, a literal", z.literal(false), true, "Must be false"],
    // custom
    ["custom, a refinement's message", IsoDate, "2026-02-30", "Must be a real calendar date"],
    ["custom, a refinement without one", z.string().refine(() => false), "x", "Invalid value"],
    // invalid_type, for a field that must not be there at all
    ["invalid_type, never", z.never().optional(), 1, "Must not be given"],
  ];
  for (const [what, schema, value, message] of cases) {
    await t.step(what, async () => {
      assert.equal(await messageFor(schema, value), message);
    });
  }

  await t.step("invalid_union: the types any option takes", async () => {
    const id = "0192f4c1-7a3e-7b10-9c55-3e2f6a8d1b04";
    assert.deepEqual(
      await refusal(z.strictObject({ customFields: CustomFieldValues }), {
        customFields: { [id]: { nested: true } },
      }),
      [{
        path: `customFields.${id}`,
        message: "Expected a string, number, boolean, array or null, got an object",
      }],
    );
  });

  await t.step("invalid_union: a tag that names no option", async () => {
    const Target = z.discriminatedUnion("kind", [
      z.strictObject({ kind: z.literal("ids"), ids: z.array(Uuid) }),
      z.strictObject({ kind: z.literal("all") }),
    ]);
    assert.deepEqual(
      await refusal(z.strictObject({ target: Target }), { target: { kind: "some" } }),
      [
        { path: "target.kind", message: 'Must be one of "ids", "all"' },
      ],
    );
  });

  await t.step("invalid_key: a record's key, at its path", async () => {
    assert.deepEqual(
      await refusal(z.strictObject({ customFields: CustomFieldValues }), {
        customFields: { colour: "red" },
      }),
      [{ path: "customFields.colour", message: "Invalid key: must be a UUID" }],
    );
  });

  await t.step("unrecognized_keys: a long name is cut in the message, never the path", async () => {
    const key = "k".repeat(100);
    assert.deepEqual(await refusal(z.strictObject({}), { [key]: 1 }), [
      { path: key, message: `Unknown field "${"k".repeat(64)}…"` },
    ]);
  });

  await t.step("one detail per path: the first problem there", async () => {
    assert.deepEqual(await refusal(z.strictObject({ when: IsoDate }), { when: "0000-13-45" }), [
      { path: "when", message: "Must be a real calendar date" },
    ]);
  });
});

Deno.test("validate() words issues JSON cannot produce the same way", () => {
  // invalid_element comes only from a Map keyed by objects, which code may check but JSON never
  // holds.
  const result = validate(z.map(z.object({}), z.string().min(1)), new Map([[{}, ""]]));
  assert.deepEqual(result, {
    success: false,
    details: [{ path: "", message: "Invalid item: must not be empty" }],
  });
});
