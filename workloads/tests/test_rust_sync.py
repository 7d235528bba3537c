"""The schema and the job-file reader must say what the runner's Rust types say:
crates/trace/src/events.rs (the events), crates/trace/src/jobfile.rs (the job file) and
crates/trace/src/protocol.rs (its protocol)."""

import os
import re
import unittest

import events
import jobspec
from workloads.tests.util import REPO

TRACE = os.path.join(REPO, "crates", "trace", "src")


def rust_items(path):
    """{name: body text} of the `pub struct` and `pub enum` items of a Rust file, with
    comments and attributes removed."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"#\[[^\]]*\]", "", text)
    items = {}
    for m in re.finditer(r"pub (?:struct|enum) (\w+)\s*\{", text):
        depth, i = 1, m.end()
        while depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        items[m.group(1)] = text[m.end():i - 1]
    return items


def struct_fields(body):
    """[(field, type)] of a struct body."""
    return re.findall(r"pub (\w+)\s*:\s*([^,]+?)\s*(?:,|$)", body.strip())


def enum_variants(body):
    """[(variant, [(field, type)])] of an enum body (unit and struct variants)."""
    out = []
    for m in re.finditer(r"(\w+)\s*(?:\{([^}]*)\})?\s*(?:,|$)", body.strip()):
        fields = re.findall(r"(\w+)\s*:\s*([^,]+?)\s*(?:,|$)", (m.group(2) or "").strip())
        out.append((m.group(1), fields))
    return out


def serde_renames(path, enum):
    """{variant: name in JSON} of the variants of `enum` in a Rust file that
    `#[serde(rename = "...")]` names."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    body = text[text.index(f"pub enum {enum} {{"):]
    body = body[:body.index("\n}")]
    return {v: name for name, v in re.findall(r'#\[serde\(rename = "(\w+)"\)\]\s*(?:///[^\n]*\s*)*(\w+)', body)}


def snake(name):
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


@unittest.skipUnless(os.path.isdir(TRACE), "crates/trace is not beside workloads/")
class EventsMatchRustTest(unittest.TestCase):
    def setUp(self):
        self.items = rust_items(os.path.join(TRACE, "events.rs"))
        self.schema = events.load_schema()
        self.enums = {name: [snake(v) for v, _ in enum_variants(self.items[name])]
                      for name in ("ErrorKind", "EndReason")}

    def rust_type(self, ty):
        """A Rust field type as (JSON types, minimum, enum values)."""
        if ty.startswith("Vec<"):
            return ({"array"}, None, None, self.rust_type(ty[len("Vec<"):-1]))
        nullable = ty.startswith("Option<")
        inner = ty[len("Option<"):-1] if nullable else ty
        if inner in self.enums:
            return ({"string"} | ({"null"} if nullable else set()), None, tuple(self.enums[inner]))
        kind, minimum = {"u32": ("integer", 0), "u64": ("integer", 0), "i32": ("integer", None),
                         "f64": ("number", None), "String": ("string", None), "bool": ("boolean", None)}[inner]
        return ({kind} | ({"null"} if nullable else set()), minimum, None)

    def schema_type(self, prop):
        while "$ref" in prop:
            prop = self.schema["$defs"][prop["$ref"].rsplit("/", 1)[1]]
        if "enum" in prop:
            return ({"string"}, None, tuple(prop["enum"]))
        types = prop["type"] if isinstance(prop["type"], list) else [prop["type"]]
        if types == ["array"]:
            return ({"array"}, None, None, self.schema_type(prop["items"]))
        return (set(types), prop.get("minimum"), None)

    def test_event_names_and_fields(self):
        common = struct_fields(self.items["Event"])
        self.assertEqual([f for f, _ in common], ["mono", "wall", "job", "body"])
        common = [(f, t) for f, t in common if f != "body"]
        variants = enum_variants(self.items["EventBody"])
        by_name = {}
        for branch in self.schema["oneOf"]:
            name = branch["$ref"].rsplit("/", 1)[1]
            by_name[name] = self.schema["$defs"][name]
        self.assertEqual([snake(v) for v, _ in variants], list(by_name))
        for variant, fields in variants:
            name = snake(variant)
            with self.subTest(event=name):
                definition = by_name[name]
                expected = [f for f, _ in common] + ["event"] + [f for f, _ in fields]
                self.assertEqual(list(definition["properties"]), expected)
                self.assertEqual(definition["required"], expected)
                self.assertIs(definition["additionalProperties"], False)
                self.assertEqual(definition["properties"]["event"], {"const": name})
                for field, ty in common + fields:
                    self.assertEqual(self.schema_type(definition["properties"][field]), self.rust_type(ty),
                                     f"{name}.{field}: Rust type {ty}")

    def test_protocol_lines_and_version(self):
        with open(os.path.join(TRACE, "events.rs"), encoding="utf-8") as f:
            text = f.read()
        self.assertIn('RELEASE_LINE: &str = "release\\n"', text)
        self.assertIn('ABORT_LINE: &str = "abort\\n"', text)
        self.assertIn('STOP_LINE: &str = "stop\\n"', text)
        version = re.search(r"PROTOCOL_VERSION: u32 = (\d+);", text)
        self.assertEqual(int(version.group(1)), events.PROTOCOL_VERSION)
        self.assertEqual(jobspec.PROTOCOL_VERSION, events.PROTOCOL_VERSION)


@unittest.skipUnless(os.path.isdir(TRACE), "crates/trace is not beside workloads/")
class JobFileMatchesRustTest(unittest.TestCase):
    KINDS = {"u32": "u32", "u64": "u64", "i32": "i32", "f64": "float", "String": "str", "bool": "bool",
             "DataSource": "str"}

    # Fields of the protocol that the job file writes whole where the Rust type has none:
    # `min_iterations` 0 (jobfile.rs, `every_field`).
    FILLED = {"min_iterations": "u32"}

    def setUp(self):
        self.items = rust_items(os.path.join(TRACE, "jobfile.rs"))
        self.items.update(rust_items(os.path.join(TRACE, "protocol.rs")))
        self.renames = serde_renames(os.path.join(TRACE, "protocol.rs"), "ProtocolKind")

    def kind(self, ty):
        if ty.startswith("Option<"):
            return self.kind(ty[len("Option<"):-1]) + "?"
        nested = {"JobData": jobspec.DATA_FIELDS, "Training": jobspec.TRAINING_FIELDS, "ProtocolKind": "protocol"}
        return nested.get(ty) or self.KINDS[ty]

    def check_struct(self, name, fields):
        rust = struct_fields(self.items[name])
        self.assertEqual([f for f, _ in rust], list(fields), name)
        for field, ty in rust:
            self.assertEqual(fields[field], self.kind(ty), f"{name}.{field}: Rust type {ty}")

    def test_structs(self):
        self.check_struct("JobFile", jobspec.JOB_FIELDS)
        self.check_struct("JobData", jobspec.DATA_FIELDS)
        self.check_struct("Training", jobspec.TRAINING_FIELDS)

    def test_enums(self):
        self.assertEqual(tuple(snake(v) for v, _ in enum_variants(self.items["DataSource"])), jobspec.SOURCES)
        variants = enum_variants(self.items["ProtocolKind"])
        self.assertEqual([self.renames[v] for v, _ in variants], list(jobspec.PROTOCOL_FIELDS))
        for variant, fields in variants:
            expected = jobspec.PROTOCOL_FIELDS[self.renames[variant]]
            self.assertEqual({f: self.FILLED.get(f) or self.kind(t) for f, t in fields}, expected, variant)
            self.assertEqual([f for f, _ in fields], list(expected), variant)


if __name__ == "__main__":
    unittest.main()
