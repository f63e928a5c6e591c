import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { changedColumns, columnOf, fieldTable } from "./fields.ts";

Deno.test("columnOf() follows the naming convention between the API and its tables", () => {
  assertEquals(columnOf("id"), "id");
  assertEquals(columnOf("deliveryDate"), "delivery_date");
  assertEquals(columnOf("unitPriceExGst"), "unit_price_ex_gst");
  assertEquals(columnOf("necklineDropCm"), "neckline_drop_cm");
});

Deno.test("fieldTable() names columns by convention unless told, and qualifies them", () => {
  const fields = fieldTable({
    createdAt: { type: "datetime" },
    event: { type: "text", column: "e.type" },
    quoteRef: { type: "text", sortColumn: "quote_number", nullable: true },
  }, { alias: "d" });
  assertEquals(fields.createdAt, {
    column: "d.created_at",
    type: "datetime",
    nullable: false,
    sortColumn: "d.created_at",
    sortType: "datetime",
  });
  assertEquals(fields.event.column, "e.type");
  assertEquals(
    [fields.quoteRef.column, fields.quoteRef.sortColumn, fields.quoteRef.nullable],
    ["d.quote_ref", "quote_number", true],
  );
});

Deno.test("changedColumns() maps the given fields to columns, leaving out undefined and the excepted", () => {
  const input = {
    productName: "Tee",
    unitPriceExGst: 0,
    description: null,
    title: undefined,
    sortOrder: 3,
  };
  assertEquals(changedColumns(input, ["sortOrder"]), {
    product_name: "Tee",
    unit_price_ex_gst: 0,
    description: null,
  });
});
