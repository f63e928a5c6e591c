/** The route sweep's knowledge of the CRM service (see `sweep.ts`). */
import type { ServiceSweep } from "./sweep.ts";

/** A customer's default markup group is the quotes service's: the CRM keeps its id as given. */
const CUSTOMER_MARKUP_REFERENCE = { defaultMarkupGroupId: "a markup group, kept by quotes" };
/** A task's quote is the quotes service's: the CRM keeps its id as given. */
const TASK_QUOTE_REFERENCE = { quoteId: "a quote, kept by the quotes service" };

export const crmSweep: ServiceSweep = {
  service: "crm",
  params: {
    customerId: "customerId",
    customerContactId: "customerContactId",
    customerAddressId: "customerAddressId",
    fieldId: "fieldId",
    vendorId: "vendorId",
    vendorContactId: "vendorContactId",
    vendorAddressId: "vendorAddressId",
    taskId: "taskId",
    checklistItemId: "checklistItemId",
    commentId: "commentId",
    attachmentId: "attachmentId",
  },
  references: {
    defaultMarkupGroupId: "markupGroupId",
    customerId: "customerId",
    vendorId: "vendorId",
    quoteId: "quoteId",
  },
  crossService: {
    createCustomer: CUSTOMER_MARKUP_REFERENCE,
    updateCustomer: CUSTOMER_MARKUP_REFERENCE,
    createTask: TASK_QUOTE_REFERENCE,
    updateTask: TASK_QUOTE_REFERENCE,
  },
  validBodies: {
    createTaskAttachment: () => ({
      fileUrl: "https://files.example.com/sweep.pdf",
      filename: "sweep.pdf",
      mimeType: "application/pdf",
      sizeBytes: 1,
    }),
    bulkSetCustomerTier: (f) => ({ target: { ids: [f.id("customerId")] }, tier: "gold" }),
    bulkTagCustomers: (f) => ({ target: { ids: [f.id("customerId")] }, add: ["sweep"] }),
    bulkArchiveCustomers: (f) => ({ target: { ids: [f.id("customerId")] }, archived: false }),
  },
  async create(client, fixture) {
    const fieldId = await client.create("/v1/custom-fields", {
      name: "Courier",
      type: "select",
      entity: "customer",
      options: ["StarTrack", "Aramex"],
    });
    const customerId = await client.create("/v1/customers", {
      companyName: "Riverside Bakery",
      customFields: { [fieldId]: "Aramex" },
    });
    const customerContactId = await client.create(`/v1/customers/${customerId}/contacts`, {
      firstName: "Sam",
    });
    const customerAddressId = await client.create(`/v1/customers/${customerId}/addresses`, {
      city: "Balmain",
    });
    const vendorId = await client.create("/v1/vendors", {
      name: "Sweep Vendor",
      kind: "Decorator",
      serviceTypes: ["ScreenPrint"],
    });
    const vendorContactId = await client.create(`/v1/vendors/${vendorId}/contacts`, {
      firstName: "Lee",
      email: "lee@sweep.example",
    });
    const vendorAddressId = await client.create(`/v1/vendors/${vendorId}/addresses`, {
      label: "Workshop",
      city: "Marrickville",
    });
    const taskId = await client.create("/v1/tasks", {
      title: "Sweep task",
      customerId,
      vendorId,
      quoteId: fixture.id("quoteId"),
    });
    const checklistItemId = await client.create(`/v1/tasks/${taskId}/checklist`, {
      text: "Check sizes",
    });
    const commentId = await client.create(`/v1/tasks/${taskId}/comments`, { body: "Hello" });
    const attachmentId = await client.create(`/v1/tasks/${taskId}/attachments`, {
      fileUrl: "https://files.example.com/a.pdf",
      filename: "a.pdf",
      mimeType: "application/pdf",
      sizeBytes: 1,
    });
    return {
      fieldId,
      customerId,
      customerContactId,
      customerAddressId,
      vendorId,
      vendorContactId,
      vendorAddressId,
      taskId,
      checklistItemId,
      commentId,
      attachmentId,
    };
  },
  snapshot: (f) => ({
    customers: "/v1/customers?limit=100",
    customFields: "/v1/custom-fields",
    vendors: "/v1/vendors?limit=100",
    archivedVendors: "/v1/vendors?limit=100&isActive=false",
    tasks: "/v1/tasks?limit=100",
    taskExtras: `/v1/tasks/${f.id("taskId")}/extras`,
  }),
};
