// The client's GraphQL types are generated from the committed schema (../schema.graphql, printed by
// `make schema`) and the operations written with `graphql(...)` in src/. `npm run codegen` writes
// src/gql/; `npm run check` (and so `npm run build`) fails when an operation doesn't match the schema
// or src/gql/ is not current.
import type { CodegenConfig } from "@graphql-codegen/cli";

const config: CodegenConfig = {
  schema: "../schema.graphql",
  documents: ["src/**/*.{ts,tsx}", "!src/gql/**/*"],
  ignoreNoDocuments: false,
  generates: {
    "src/gql/": {
      preset: "client",
      presetConfig: { fragmentMasking: false },
      config: {
        // Operations stay strings on the wire (no graphql-js in the bundle).
        documentMode: "string",
        enumsAsTypes: true,
        useTypeImports: true,
        strictScalars: true,
        scalars: { DateTime: "string", JSON: "unknown" },
      },
    },
  },
};

export default config;
