; Python: the nodes the extractor reads. Capture names are roles:
;   def.<kind> on a definition, with @name on its name;
;   import on import statements;
;   local on a binding target inside a function, local.params on parameter
;   lists, local.global on `global`/`nonlocal` declarations;
;   reference sites are read by a tree walk in the extractor.
; The extractor reads context (parents, fields) the patterns do not express.

(function_definition name: (identifier) @name) @def.function
(class_definition name: (identifier) @name) @def.class
(module
  (expression_statement (assignment left: (identifier) @name) @def.variable))

(import_statement) @import
(import_from_statement) @import

(parameters) @local.params
(lambda_parameters) @local.params
(assignment left: (_) @local)
(augmented_assignment left: (identifier) @local)
(for_statement left: (_) @local)
(for_in_clause left: (_) @local)
(as_pattern alias: (_) @local)
(named_expression name: (identifier) @local)
(global_statement) @local.global
(nonlocal_statement) @local.global
