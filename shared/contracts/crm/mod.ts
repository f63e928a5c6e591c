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

export const crmContract = serviceContract("crm", {
  ...customerOperations,
  ...customFieldOperations,
  ...vendorOperations,
  ...taskOperations,
});
