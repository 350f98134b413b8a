// JSON Schemas (draft 2020-12) of the tools' inputs.
//
// This module is the single source of the schemas: skill.js returns them from
// list-tools, and build.mjs checks that ../schemas/<tool>.json (the files the
// manifest points at) hold the same thing (`node build.mjs --write-schemas`
// rewrites them). Keep it free of imports so that Node can load it too.

export const slugifySchema = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  properties: {
    text: { type: "string", description: "Text to turn into a slug." },
    separator: {
      type: "string",
      description: "Separator between words (default '-'). One of '-', '_', '.'.",
      enum: ["-", "_", "."],
    },
    max_length: {
      type: "integer",
      minimum: 1,
      maximum: 200,
      description: "Cut the slug to at most this many characters, at a word boundary when possible.",
    },
  },
  required: ["text"],
  additionalProperties: false,
};

export const wordStatsSchema = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  properties: {
    text: { type: "string", description: "Text to analyse." },
    top: {
      type: "integer",
      minimum: 0,
      maximum: 50,
      description: "How many of the most frequent words to return (default 5).",
    },
  },
  required: ["text"],
  additionalProperties: false,
};
