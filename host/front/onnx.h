/* onnx.h: ONNX models (If, Loop, Scan and a tensor op set) imported as .cfx text.
 *
 * The importer reads a serialized ModelProto with protobuf-c, fixes every shape (the inputs'
 * declared or given shapes, then its own propagation, folding what is known at import: shape
 * arithmetic, constants, branches on known conditions) and writes one .cfx graph whose
 * statements carry their ONNX node's name in a comment. The text then goes through the
 * compiler like any other, so every executor, status, trace and cost sheet works on it.
 * Constants (initializers, Constant nodes, folded values) become the module's `const`
 * declarations: small ones written out in the text, larger ones bound in memory (the table
 * below) or written as .npy files beside the text (`cfx import -o`). */
#ifndef CFX_ONNX_H
#define CFX_ONNX_H

#include <stddef.h>

#include "host/cfx.h"

/* A constant the text declares without a value, with its data (owned by the import). */
typedef struct onnx_constant {
    char *name;
    cfx_type type;
    void *data;
} onnx_constant;

typedef struct onnx_import {
    char *text;               /* the .cfx source */
    char *file;               /* the name the text goes by in messages: MODEL.onnx.cfx */
    onnx_constant *constants; /* values of the `const NAME: TYPE` declarations without one */
    int nconstants;
    char **input_names;       /* the ONNX names of the graph's inputs, in parameter order */
    int ninputs;
    char **result_names;      /* and of its outputs, in result order */
    int nresults;
    char **known_names;       /* its inputs of 0 elements, given by their type alone: values */
    cfx_type *known_types;    /* known at import, not parameters (cfx_known_input_count) */
    int nknown;
    char **kres_names;        /* its outputs of 0 elements, known at import: not results of the */
    cfx_type *kres_types;     /* text's graph (cfx_known_result_count) */
    int nkres;
} onnx_import;

/* Imports the model in bytes[0, len) (or, where bytes is NULL, read from path). `path` names
 * the model in messages and locates external data (NULL: "model.onnx", no external data).
 * shapes/nshapes fix symbolic dimensions of inputs. data_dir: where constants of more than 16
 * elements are written as .npy files (the text names them as data_dir_text/NAME.npy); NULL
 * keeps them in out->constants. Returns 0, or -1 with one line in *err (free()). */
int onnx_import_model(const char *path, const void *bytes, size_t len,
                      const cfx_input_shape *shapes, int nshapes, const char *data_dir,
                      const char *data_dir_text, onnx_import *out, char **err);
void onnx_import_free(onnx_import *im);

#endif
