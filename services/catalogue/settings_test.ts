import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { callAs, okAs, type ServiceHarness, serviceHarness } from "@printshop/shared/testing";
import type { CatalogueSettings } from "@printshop/shared/contracts/catalogue";
import type { Config } from "./config.ts";
import { catalogueService } from "./app.ts";

type H = ServiceHarness<Config>;

const TRIES = 20;

Deno.test("catalogue settings: two concurrent PATCHes of different fields both survive", async () => {
  await using h: H = await serviceHarness(catalogueService);
  const lost: string[] = [];
  for (let i = 0; i < TRIES; i++) {
    const org = crypto.randomUUID();
    // Half the tries start from the defaults (no row yet: both insert), half from a stored row.
    if (i % 2 === 1) await okAs(h, "PATCH", "/v1/catalogue-settings", org, { sizeOrder: ["M"] });
    const sizeOrder = ["S", "M", `L${i}`];
    const answers = await Promise.all([
      callAs(h, "PATCH", "/v1/catalogue-settings", org, { sizeOrder }),
      callAs(h, "PATCH", "/v1/catalogue-settings", org, { allowNegativeStock: true }),
    ]);
    assertEquals(answers.map((a) => a.status), [200, 200], JSON.stringify(answers));
    const settings = await okAs<CatalogueSettings>(h, "GET", "/v1/catalogue-settings", org);
    if (settings.allowNegativeStock !== true || settings.sizeOrder.join() !== sizeOrder.join()) {
      lost.push(`try ${i}: ${JSON.stringify(settings)}`);
    }
    // Each answer is the settings as its own change left them, and the event says the same.
    const events = await h.sql<{ payload: CatalogueSettings }[]>`
      SELECT payload FROM outbox
      WHERE organization_id = ${org} AND type = 'catalogue_settings.updated' ORDER BY id`;
    const last = events.at(-1)!.payload;
    if (last.allowNegativeStock !== true || last.sizeOrder.join() !== sizeOrder.join()) {
      lost.push(`try ${i}: the last event says ${JSON.stringify(last)}`);
    }
  }
  assertEquals(lost, [], `a change was lost in ${lost.length} of ${TRIES * 2} checks`);
});

Deno.test("catalogue settings: a PATCH changes only what it names, and one naming nothing writes nothing", async () => {
  await using h: H = await serviceHarness(catalogueService);
  const org = crypto.randomUUID();
  const first = await okAs<CatalogueSettings>(h, "PATCH", "/v1/catalogue-settings", org, {
    allowNegativeStock: true,
  });
  assertEquals(first.allowNegativeStock, true);
  assertEquals(first.sizeOrder.slice(0, 2), ["YXS", "YS"], "the default order until changed");
  const second = await okAs<CatalogueSettings>(h, "PATCH", "/v1/catalogue-settings", org, {
    sizeOrder: ["S", "M"],
  });
  assertEquals([second.sizeOrder, second.allowNegativeStock], [["S", "M"], true]);
  const third = await okAs<CatalogueSettings>(h, "PATCH", "/v1/catalogue-settings", org, {
    allowNegativeStock: false,
  });
  assertEquals([third.sizeOrder, third.allowNegativeStock], [["S", "M"], false]);
  const empty = await okAs<CatalogueSettings>(h, "PATCH", "/v1/catalogue-settings", org, {});
  assertEquals([empty.sizeOrder, empty.allowNegativeStock], [["S", "M"], false]);
  assertEquals(empty.updatedAt, third.updatedAt, "a PATCH naming nothing changes nothing");
  // One event per change made; the empty PATCH made none.
  const [counted] = await h.sql<{ events: number }[]>`
    SELECT count(*)::int AS events FROM outbox
    WHERE organization_id = ${org} AND type = 'catalogue_settings.updated'`;
  assertEquals(counted?.events, 3);
});
