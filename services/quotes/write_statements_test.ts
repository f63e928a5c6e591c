/**
 * How many SQL statements a row write sends (issue 15: a write should cost close to one
 * transaction). Each count is what the store modules are built to send today (README, "Row
 * writes take few statements"); a change that adds a statement to one of these paths fails here
 * and has to say why in this file.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { serviceHarness } from "@printshop/shared/testing";
import { quotesService } from "./app.ts";

type Json = Record<string, unknown>;

Deno.test("row writes on a quote send the statements they are built to", async () => {
  const texts: string[] = [];
  const h = await serviceHarness(quotesService, { onQuery: (text) => texts.push(text) });
  const org = crypto.randomUUID();
  const call = async (method: string, path: string, body?: unknown): Promise<Json> => {
    const res = await h.request(method, path, {
      organizationId: org,
      ...(body === undefined ? {} : { body }),
    });
    const json = await res.json() as Json;
    assertEquals(res.status < 300, true, `${method} ${path}: ${JSON.stringify(json)}`);
    return json.data as Json;
  };
  /** The statements `write` sent, with their text when the count is not the expected one. */
  const statements = async (write: () => Promise<Json>): Promise<[number, Json]> => {
    texts.length = 0;
    const data = await write();
    return [texts.length, data];
  };
  const variant = (size: string): Json => ({
    size,
    colour: "Black",
    quantity: 6,
    buyPrice: 6.25,
    extraCost: 0.5,
    markupType: "percentage",
    markupValue: 40,
  });
  try {
    const quote = await call("POST", "/v1/quotes", { reference: "Statements" });
    const group = await call("POST", `/v1/quotes/${quote.id}/groups`, { name: "Tees" });
    const other = await call("POST", `/v1/quote-groups/${group.id}/lines`, {
      lineType: "Garment",
      productName: "Classic tee",
    });
    for (const size of ["S", "M", "L"]) {
      await call("POST", `/v1/quote-lines/${other.id}/variants`, variant(size));
    }

    // begin, lock + row check, INSERT, mark the quote changed + event, commit.
    const [linePost, line] = await statements(() =>
      call("POST", `/v1/quote-groups/${group.id}/lines`, {
        lineType: "Garment",
        productName: "Heavy tee",
      })
    );
    assertEquals(linePost, 7, texts.join("\n"));

    // begin + lock + line, INSERT + 3 recomputation reads + the markup groups (the line's rows
    // may re-band), write-back + event, commit.
    const [variantPost, created] = await statements(() =>
      call("POST", `/v1/quote-lines/${line.id}/variants`, variant("XL"))
    );
    assertEquals(variantPost, 11, texts.join("\n"));

    // begin + lock + variant, UPDATE + 3 recomputation reads + the markup groups, write-back +
    // event, commit.
    const [variantPatch] = await statements(() =>
      call("PATCH", `/v1/quote-variants/${created.id}`, { quantity: 7 })
    );
    assertEquals(variantPatch, 11, texts.join("\n"));

    // begin + lock + line, DELETE + compaction, 3 recomputation reads (nothing re-bands), write-back
    // + event, commit.
    const [lineDelete] = await statements(() => call("DELETE", `/v1/quote-lines/${line.id}`));
    assertEquals(lineDelete, 11, texts.join("\n"));
  } finally {
    await h.close();
  }
});
