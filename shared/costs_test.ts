import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { ApiError } from "./http/errors.ts";
import {
  assertMayFilterCosts,
  assertMayWriteCosts,
  COST_FIELDS,
  COSTS_READ_FIELDS,
  MARGIN_FIELDS,
  visibleTo,
  withoutCosts,
} from "./costs.ts";

Deno.test("withoutCosts() removes cost and margin fields at every depth and keeps the rest", () => {
  const quote = {
    id: "q",
    total: 10,
    groups: [{
      setupCost: 5,
      decorations: [{ baseUnitCost: 2.4, markupType: "percentage", markupValue: 20 }],
      lines: [{
        unitCost: 1,
        variants: [{ buyPrice: 2, extraCost: 3, quantity: 4, markupSource: "manual" }],
      }],
    }],
    group: { id: "g", name: "Bulk", bands: [{ from: 1, markupValue: 33 }] },
  };
  assertEquals(withoutCosts(quote), {
    id: "q",
    total: 10,
    groups: [{
      decorations: [{ baseUnitCost: 2.4 }],
      lines: [{ variants: [{ quantity: 4, markupSource: "manual" }] }],
    }],
    group: { id: "g", name: "Bulk" },
  });
  assertEquals(quote.groups[0]!.setupCost, 5, "the input is not changed");
  assertEquals(withoutCosts(null), null);
  assertEquals(withoutCosts([1, "a"]), [1, "a"]);
});

Deno.test("visibleTo() drops cost and margin keys at any depth only for a caller without costs", () => {
  const variant = { id: "v", unitPriceExGst: 7.98, buyPrice: 6, markupType: "percentage" };
  assertEquals(visibleTo(variant, true), variant);
  assertEquals(visibleTo(variant, false), { id: "v", unitPriceExGst: 7.98 });
  const item = { id: "p", decorations: [{ position: "Front", unitCost: 1.2, setupCost: 40 }] };
  assertEquals(visibleTo(item, false), { id: "p", decorations: [{ position: "Front" }] });
});

Deno.test("assertMayWriteCosts() refuses every cost and margin field without costs.read", () => {
  assertEquals(COSTS_READ_FIELDS, [...COST_FIELDS, ...MARGIN_FIELDS]);
  for (const field of COSTS_READ_FIELDS) {
    assert.throws(
      () => assertMayWriteCosts(["quotes.write"], { quantity: 1, [field]: null }),
      (e: unknown) =>
        e instanceof ApiError && e.code === "insufficient_scope" &&
        e.message.includes(`"${field}"`),
      field,
    );
    assertMayWriteCosts(["quotes.write", "costs.read"], { [field]: null });
  }
  // The sell price is not secret.
  assertMayWriteCosts(["quotes.write"], { unitPriceExGst: 7.98, baseUnitCost: 2.4 });
  // Nested rows (a pre-built item's decorations, a bulk row) are looked into too.
  assert.throws(
    () => assertMayWriteCosts(["prebuiltitems.write"], { decorations: [{ unitCost: 1 }] }),
    (e: unknown) => e instanceof ApiError && e.message.includes('"decorations.0.unitCost"'),
  );
});

Deno.test("every published object leaves its cost and margin fields optional", async () => {
  // Imported here so the unit tests above do not build the whole document.
  const { buildOpenApiDocument } = await import("./openapi.ts");
  const required: string[] = [];
  const walk = (node: unknown, at: string): void => {
    if (Array.isArray(node)) return node.forEach((n, i) => walk(n, `${at}/${i}`));
    if (node === null || typeof node !== "object") return;
    const schema = node as Record<string, unknown>;
    if (Array.isArray(schema.required)) {
      for (const key of schema.required as string[]) {
        if (COSTS_READ_FIELDS.includes(key as never)) required.push(`${at}: ${key}`);
      }
    }
    for (const [key, value] of Object.entries(schema)) {
      // Inside a field that is itself left out (a group's bands), anything may be required.
      if (at.endsWith("/properties") && COSTS_READ_FIELDS.includes(key as never)) continue;
      walk(value, `${at}/${key}`);
    }
  };
  const doc = buildOpenApiDocument();
  walk(doc.components, "#/components");
  walk(doc.paths, "#/paths");
  // What only operations that need costs.read outright answer (the pricing preview) always
  // carries its cost fields: the schemas reachable from those alone, and those operations.
  const schemas = (doc.components?.schemas ?? {}) as Record<string, unknown>;
  const reachable = (root: unknown, into = new Set<string>()): Set<string> => {
    const visit = (node: unknown): void => {
      if (Array.isArray(node)) return node.forEach(visit);
      if (node === null || typeof node !== "object") return;
      const ref = (node as { $ref?: unknown }).$ref;
      if (typeof ref === "string" && ref.startsWith("#/components/schemas/")) {
        const name = ref.slice("#/components/schemas/".length);
        if (!into.has(name)) {
          into.add(name);
          visit(schemas[name]);
        }
      }
      Object.values(node).forEach(visit);
    };
    visit(root);
    return into;
  };
  const costsOnly = new Set<string>();
  const costsOnlyPaths: string[] = [];
  const elsewhere = reachable(doc.webhooks ?? {});
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(item ?? {})) {
      const needsCosts = (operation["x-also-required-scopes"] ?? []).includes("costs.read");
      reachable(operation, needsCosts ? costsOnly : elsewhere);
      if (needsCosts) costsOnlyPaths.push(`#/paths/${path}/${method}/`);
    }
  }
  const exempt = [...costsOnly].filter((name) => !elsewhere.has(name));
  // Request bodies may require them (a markup group's bands); a caller without costs.read is
  // refused before the body is read. Only what is answered must be able to leave them out.
  const answered = required.filter((r) =>
    !/Create[A-Za-z]*Body|Update[A-Za-z]*Body|requestBody/.test(r) &&
    !exempt.some((name) =>
      /^[/:]/.test(r.slice(`#/components/schemas/${name}`.length)) &&
      r.startsWith(`#/components/schemas/${name}`)
    ) &&
    !costsOnlyPaths.some((path) => r.startsWith(path))
  );
  assert(exempt.includes("QuotePreview"), exempt.join(", "));
  assertEquals(answered, []);
});

Deno.test("assertMayFilterCosts() refuses a cost field in filters, sortField or a bulk target", () => {
  const refuses = (query: Record<string, unknown>, body: unknown = {}): void =>
    assert.throws(
      () => assertMayFilterCosts(["garments.read"], query, body),
      (e: unknown) => e instanceof ApiError && e.code === "insufficient_scope",
    );
  refuses({ filters: JSON.stringify([{ field: "buyPrice", op: "gt", value: 3.4 }]) });
  refuses({ sortField: "buyPrice" });
  refuses({}, { target: { filters: [{ field: "unitCost", op: "isNull" }] } });
  assertMayFilterCosts(["garments.read"], {
    filters: JSON.stringify([{ field: "unitPrice", op: "gt", value: 1 }]),
    sortField: "styleCode",
  }, { target: { ids: [] } });
  assertMayFilterCosts(["garments.read", "costs.read"], { sortField: "buyPrice" }, {});
  assertMayFilterCosts(["garments.read"], { filters: "not json" }, {});
});
