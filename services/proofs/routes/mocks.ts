import type { mockOperations } from "@printshop/shared/contracts/proofs";
import type { Handlers } from "@printshop/shared/service-app";
import type { ServiceDeps } from "@printshop/shared/service-main";
import type { Config } from "../config.ts";
import { createMock, deleteMock, findMock, listMocks, updateMock } from "../store/mocks.ts";

/** `/v1/mocks`: the list is not paged, so a capped answer says so in its message. */
export function mockRoutes({ sql, config }: ServiceDeps<Config>): Handlers<typeof mockOperations> {
  return {
    listMocks: async ({ query, organizationId }) => {
      const cap = config.PAGE_SIZE_MAX;
      const { items, truncated } = await listMocks(sql, organizationId, query, cap);
      return {
        data: items,
        message: truncated
          ? `Showing the first ${cap} mocks, the most one answer holds (pageSizeMax); ` +
            `narrow the list with quoteGroupId or jobId to see the rest`
          : "OK",
      };
    },
    createMock: async ({ body, organizationId }) => ({
      status: 201,
      data: await createMock(sql, organizationId, body),
      message: "Mock created",
    }),
    getMock: async ({ params, organizationId }) => ({
      data: await findMock(sql, organizationId, params.mockId),
    }),
    updateMock: async ({ params, body, organizationId }) => ({
      data: await updateMock(sql, organizationId, params.mockId, body),
      message: "Mock updated",
    }),
    deleteMock: async ({ params, organizationId }) => {
      const mock = await deleteMock(sql, organizationId, params.mockId);
      return { data: { id: mock.id }, message: "Mock deleted" };
    },
  };
}
