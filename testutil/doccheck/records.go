package doccheck

import (
	"errors"
	"fmt"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/mlx-otelcol/mlx-otelcol/cmd/mdgen/mdschema"
)

// valueTypes are the pdata types of metadata.yaml's attribute types.
var valueTypes = map[string]pcommon.ValueType{
	"string": pcommon.ValueTypeStr, "int": pcommon.ValueTypeInt, "double": pcommon.ValueTypeDouble,
	"bool": pcommon.ValueTypeBool, "slice": pcommon.ValueTypeSlice,
}

// CheckAttributes holds the attributes of an emitted span, log record or
// resource to a table of a metadata.yaml (span_attributes, a kind of
// log_attributes, resource_attributes): every key is in the table with its
// type (a slice's elements too), and every key the table says is always
// set is there.
func CheckAttributes(table mdschema.RecordAttributes, attrs pcommon.Map) error {
	var errs []error
	for k, v := range attrs.All() {
		e, ok := table.Lookup(k)
		if !ok {
			errs = append(errs, fmt.Errorf("%s: not in metadata.yaml", k))
			continue
		}
		a := e.Value
		if v.Type() != valueTypes[a.Type] {
			errs = append(errs, fmt.Errorf("%s: a %s, metadata.yaml says %s", k, v.Type(), a.TypeName()))
			continue
		}
		if v.Type() == pcommon.ValueTypeSlice {
			for i := 0; i < v.Slice().Len(); i++ {
				if el := v.Slice().At(i); el.Type() != valueTypes[a.ElementType] {
					errs = append(errs, fmt.Errorf("%s: element %d is a %s, metadata.yaml says %s", k, i, el.Type(), a.TypeName()))
				}
			}
		}
	}
	for _, e := range table {
		if _, ok := attrs.Get(e.Key); e.Value.Always() && !ok {
			errs = append(errs, fmt.Errorf("%s: missing, metadata.yaml says it is always set", e.Key))
		}
	}
	return errors.Join(errs...)
}
