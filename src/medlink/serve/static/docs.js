// The API reference: each endpoint of /openapi.json with its parameters, request body and responses, schemas inlined.
// Made here rather than with Swagger UI, which FastAPI loads from another host: this page works offline.
"use strict";

function resolve(schema, spec, depth) {
  if (!schema || depth > 6) return schema;
  if (schema.$ref) return resolve(spec.components.schemas[schema.$ref.split("/").pop()], spec, depth + 1);
  const out = Array.isArray(schema) ? [] : {};
  for (const [key, value] of Object.entries(schema)) {
    out[key] = value && typeof value === "object" ? resolve(value, spec, depth + 1) : value;
  }
  return out;
}

function shape(schema) {
  // a compact reading of a schema: {"field": type, ...}
  if (!schema) return "";
  if (schema.anyOf) return schema.anyOf.map(shape).join(" | ");
  if (schema.enum) return schema.enum.map((v) => JSON.stringify(v)).join(" | ");
  if (schema.type === "array") return `[${shape(schema.items)}]`;
  if (schema.type === "object" || schema.properties) {
    const fields = Object.entries(schema.properties || {}).map(([name, field]) => {
      const required = (schema.required || []).includes(name) ? "" : "?";
      return `${name}${required}: ${shape(field)}`;
    });
    return fields.length ? `{${fields.join(", ")}}` : "object";
  }
  return schema.type || "any";
}

function element(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (className) node.className = className;
  return node;
}

async function main() {
  const spec = await (await fetch("/openapi.json")).json();
  document.getElementById("version").textContent = `${spec.info.title} ${spec.info.version} · ${spec.info.description || ""}`;
  const box = document.getElementById("endpoints");
  box.replaceChildren();
  for (const [path, operations] of Object.entries(spec.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const section = element("section", undefined, "endpoint");
      section.append(element("h2", `${method.toUpperCase()} ${path}`), element("p", operation.summary || ""));
      if (operation.description) section.append(element("p", operation.description, "quiet"));
      for (const parameter of operation.parameters || []) {
        section.append(element("p", `${parameter.in} parameter ${parameter.name}${parameter.required ? "" : " (optional)"}: ${shape(resolve(parameter.schema, spec, 0))}`));
      }
      const body = operation.requestBody && operation.requestBody.content["application/json"];
      if (body) section.append(element("h3", "Request body"), element("pre", shape(resolve(body.schema, spec, 0))));
      for (const [code, response] of Object.entries(operation.responses || {})) {
        const json = response.content && response.content["application/json"];
        section.append(element("p", `${code}: ${response.description || ""}`), element("pre", json ? shape(resolve(json.schema, spec, 0)) : ""));
      }
      box.append(section);
    }
  }
}

main().catch((error) => { document.getElementById("endpoints").textContent = `could not read /openapi.json: ${error.message}`; });
