/**
 * The CRM service's contract: every operation it serves and every event it emits. A new
 * resource is a file beside these, listed once below.
 */
import { serviceContract } from "../operation.ts";
import { customerEvents, customerOperations } from "./customers.ts";
import { customFieldEvents, customFieldOperations } from "./custom_fields.ts";
import { vendorEvents, vendorOperations } from "./vendors.ts";
import { taskEvents, taskOperations } from "./tasks.ts";

export * from "./values.ts";
export * from "./customers.ts";
export * from "./custom_fields.ts";
export * from "./vendors.ts";
export * from "./tasks.ts";

export const crmEvents = {
  ...customerEvents,
  ...customFieldEvents,
  ...vendorEvents,
  ...taskEvents,
};

/** The tags its resources' operations are listed under, and what each tag's operations do. */
const crmTags = {
  Customers: "The shop's clients with their contacts and addresses; tiers, tags and archiving " +
    "in bulk over a target",
  "Custom fields": "Fields a shop adds to its customers, vendors and tasks, with values checked " +
    "against them",
  Vendors: "Businesses the shop buys from or outsources decoration to, with their contacts and " +
    "addresses; archived rather than deleted",
  Tasks: "The shop's to-dos, linked to a quote, customer, vendor or job, with a checklist, " +
    "comments and attachments",
};

export const crmContract = serviceContract("crm", {
  ...customerOperations,
  ...customFieldOperations,
  ...vendorOperations,
  ...taskOperations,
}, { tags: crmTags });
