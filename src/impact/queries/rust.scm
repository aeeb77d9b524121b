; Rust: the nodes the extractor reads. Capture names are roles:
;   def.<kind> on an item, with @name on its name;
;   import on `use` and `extern crate`;
;   local on a pattern that binds names; local.type on a type parameter;
;   reference sites are read by a tree walk in the extractor.
; The extractor reads context (parents, fields) the patterns do not express.

(function_item name: (identifier) @name) @def.function
(function_signature_item name: (identifier) @name) @def.function
(struct_item name: (type_identifier) @name) @def.struct
(union_item name: (type_identifier) @name) @def.struct
(enum_item name: (type_identifier) @name) @def.enum
(enum_variant name: (identifier) @name) @def.variant
(trait_item name: (type_identifier) @name) @def.trait
(type_item name: (type_identifier) @name) @def.type
(associated_type name: (type_identifier) @name) @def.type
(const_item name: (identifier) @name) @def.const
(static_item name: (identifier) @name) @def.static
(mod_item name: (identifier) @name) @def.module
(macro_definition name: (identifier) @name) @def.macro

(use_declaration) @import
(extern_crate_declaration) @import

(let_declaration pattern: (_) @local)
(parameter pattern: (_) @local)
(closure_parameters (_) @local)
(for_expression pattern: (_) @local)
(let_condition pattern: (_) @local)
(match_pattern) @local
(type_parameter name: (type_identifier) @local.type)
