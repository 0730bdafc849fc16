package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
	"time"

	"github.com/blang/semver/v4"
	celgo "github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/apiserver/pkg/cel/library"
	"k8s.io/dynamic-resource-allocation/cel"
)

// deviceInput is the device file of `cel eval`: a v1 Device plus the driver
// that unqualified attribute and capacity names belong to.
type deviceInput struct {
	resourceapi.Device
	Driver string `json:"driver,omitempty"`
}

func (d deviceInput) celDevice() cel.Device {
	return cel.Device{
		Driver:                   d.Driver,
		AllowMultipleAllocations: d.AllowMultipleAllocations,
		Attributes:               d.Attributes,
		Capacity:                 d.Capacity,
	}
}

func loadDevice(path string) (deviceInput, error) {
	var device deviceInput
	if path == "" {
		return device, nil
	}
	docs, err := readFileDocuments(path)
	if err != nil {
		return device, err
	}
	if len(docs) != 1 {
		return device, invalidf("%s: expected one device object, found %d documents", path, len(docs))
	}
	if err := decodeStrict(docs[0], &device); err != nil {
		return device, invalidf("%s: %v", path, err)
	}
	return device, nil
}

// loadDevices reads a device list for `cel bench`: either plain device
// objects (each with an optional driver) or ResourceSlices, whose devices
// take the slice's driver.
func loadDevices(path string) ([]deviceInput, error) {
	docs, err := readFileDocuments(path)
	if err != nil {
		return nil, err
	}
	var devices []deviceInput
	for i, raw := range docs {
		var meta typeMeta
		_ = json.Unmarshal(raw, &meta)
		switch meta.Kind {
		case "ResourceSlice":
			var slice resourceapi.ResourceSlice
			if err := decodeStrict(raw, &slice); err != nil {
				return nil, invalidf("%s: document %d: %v", path, i, err)
			}
			for _, device := range slice.Spec.Devices {
				devices = append(devices, deviceInput{Device: device, Driver: slice.Spec.Driver})
			}
		case "":
			var device deviceInput
			if err := decodeStrict(raw, &device); err != nil {
				return nil, invalidf("%s: document %d: %v", path, i, err)
			}
			devices = append(devices, device)
		default:
			return nil, invalidf("%s: document %d: kind %q is neither a device nor a ResourceSlice", path, i, meta.Kind)
		}
	}
	if len(devices) == 0 {
		return nil, invalidf("%s: no devices", path)
	}
	return devices, nil
}

func readFileDocuments(path string) ([]json.RawMessage, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, invalidf("%v", err)
	}
	defer f.Close()
	return readDocuments(f)
}

func parseEnvironment(name string) (environment.Type, error) {
	switch strings.ToLower(name) {
	case "", "stored", "storedexpressions":
		return environment.StoredExpressions, nil
	case "new", "newexpressions":
		return environment.NewExpressions, nil
	}
	return "", usagef("--environment must be stored or new, got %q", name)
}

type celError struct {
	Phase   string `json:"phase"`
	Message string `json:"message"`
}

type celCost struct {
	Estimated uint64  `json:"estimated"`
	Actual    *uint64 `json:"actual,omitempty"`
}

// celOutcome is what `cel eval` prints.
type celOutcome struct {
	Value any       `json:"value,omitempty"`
	Type  string    `json:"type,omitempty"`
	Error *celError `json:"error,omitempty"`
	Cost  *celCost  `json:"cost,omitempty"`
	// Mode says how the expression was evaluated: as a device selector
	// (DRA compiler + DeviceMatches) or as a plain value.
	Mode string `json:"mode"`
}

// MarshalJSON keeps "value": null for a null result while leaving the key
// out on errors.
func (o celOutcome) MarshalJSON() ([]byte, error) {
	out := map[string]any{"mode": o.Mode}
	if o.Error != nil {
		out["error"] = o.Error
	} else {
		out["value"] = o.Value
		out["type"] = o.Type
	}
	if o.Cost != nil {
		out["cost"] = o.Cost
	}
	var buf bytes.Buffer
	encoder := json.NewEncoder(&buf)
	encoder.SetEscapeHTML(false)
	if err := encoder.Encode(out); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

type celOptions struct {
	envType environment.Type
	gates   gates
	mode    string // auto, selector, value
}

// compiledValue is a non-selector expression compiled in the DRA environment.
type compiledValue struct {
	program   celgo.Program
	env       *celgo.Env
	estimated uint64
	listType  bool
}

// draEnvironment returns the exact CEL environment the DRA compiler uses for
// these options: the environment of a trivially valid selector.
func draEnvironment(compiler interface {
	CompileCELExpression(string, cel.Options) cel.CompilationResult
}, envType environment.Type) (*celgo.Env, error) {
	probe := compiler.CompileCELExpression("true", cel.Options{EnvType: &envType, DisableCostEstimation: true})
	if probe.Error != nil {
		return nil, probe.Error
	}
	return probe.Environment, nil
}

func compileValue(opts celOptions, expression string) (*compiledValue, *celError) {
	compiler := cel.GetCompiler(opts.gates.celFeatures())
	env, err := draEnvironment(compiler, opts.envType)
	if err != nil {
		return nil, &celError{Phase: "compile", Message: "unexpected error loading CEL environment: " + err.Error()}
	}
	ast, issues := env.Compile(expression)
	if issues != nil && issues.Err() != nil {
		return nil, &celError{Phase: "compile", Message: "compilation failed: " + issues.String()}
	}
	program, err := env.Program(ast,
		celgo.CostLimit(resourceapi.CELSelectorExpressionMaxCost),
		celgo.InterruptCheckFrequency(celconfig.CheckFrequency),
	)
	if err != nil {
		return nil, &celError{Phase: "compile", Message: "program instantiation failed: " + err.Error()}
	}
	listType := opts.envType == environment.StoredExpressions || opts.gates["DRAListTypeAttributes"]
	estimate, err := env.EstimateCost(ast, &library.CostEstimator{SizeEstimator: newDeviceSizeEstimator(listType, opts.gates["DRAConsumableCapacity"] || opts.envType == environment.StoredExpressions)})
	if err != nil {
		return nil, &celError{Phase: "compile", Message: "cost estimation failed: " + err.Error()}
	}
	return &compiledValue{program: program, env: env, estimated: estimate.Max, listType: listType}, nil
}

func isOutputTypeError(err *apiservercel.Error) bool {
	return err != nil && strings.HasPrefix(err.Detail, "must evaluate to ")
}

// evalOnce compiles and evaluates one expression against one device.
func evalOnce(opts celOptions, expression string, device deviceInput) celOutcome {
	ctx := context.Background()
	if opts.mode != "value" {
		compiler := cel.GetCompiler(opts.gates.celFeatures())
		compiled := compiler.CompileCELExpression(expression, cel.Options{EnvType: &opts.envType})
		if compiled.Error == nil {
			cost := &celCost{Estimated: compiled.MaxCost}
			matches, details, err := compiled.DeviceMatches(ctx, device.celDevice())
			cost.Actual = actualCost(details)
			if err != nil {
				return celOutcome{Mode: "selector", Error: &celError{Phase: "runtime", Message: err.Error()}, Cost: cost}
			}
			return celOutcome{Mode: "selector", Value: matches, Type: "bool", Cost: cost}
		}
		if opts.mode == "selector" || !isOutputTypeError(compiled.Error) {
			return celOutcome{Mode: "selector", Error: &celError{Phase: "compile", Message: compiled.Error.Error()}}
		}
	}
	value, cerr := compileValue(opts, expression)
	if cerr != nil {
		return celOutcome{Mode: "value", Error: cerr}
	}
	cost := &celCost{Estimated: value.estimated}
	result, details, err := value.eval(ctx, device)
	cost.Actual = actualCost(details)
	if err != nil {
		return celOutcome{Mode: "value", Error: &celError{Phase: "runtime", Message: err.Error()}, Cost: cost}
	}
	converted, typeName := celToJSON(result)
	return celOutcome{Mode: "value", Value: converted, Type: typeName, Cost: cost}
}

func actualCost(details *celgo.EvalDetails) *uint64 {
	if details == nil {
		return nil
	}
	return details.ActualCost()
}

// eval binds the `device` variable the way the DRA package does for
// selectors: unqualified names go to the driver's domain, an unknown domain
// reads as an empty map, version attributes become semver values.
func (c *compiledValue) eval(ctx context.Context, device deviceInput) (ref.Val, *celgo.EvalDetails, error) {
	activation, err := deviceActivation(c.env, device)
	if err != nil {
		return nil, nil, err
	}
	return c.program.ContextEval(ctx, activation)
}

func deviceActivation(env *celgo.Env, device deviceInput) (map[string]any, error) {
	attributes := map[string]any{}
	for name, attr := range device.Attributes {
		value, err := attributeValue(attr)
		if err != nil {
			return nil, fmt.Errorf("attribute %s: %w", name, err)
		}
		domain, id := splitQualified(string(name), device.Driver)
		inner, ok := attributes[domain].(map[string]any)
		if !ok {
			inner = map[string]any{}
			attributes[domain] = inner
		}
		inner[id] = value
	}
	capacity := map[string]any{}
	for name, capValue := range device.Capacity {
		domain, id := splitQualified(string(name), device.Driver)
		inner, ok := capacity[domain].(map[string]apiservercel.Quantity)
		if !ok {
			inner = map[string]apiservercel.Quantity{}
			capacity[domain] = inner
		}
		q := capValue.Value.DeepCopy()
		inner[id] = apiservercel.Quantity{Quantity: &q}
	}
	adapter := env.CELTypeAdapter()
	empty := adapter.NativeToValue(map[string]any{})
	multi := device.AllowMultipleAllocations != nil && *device.AllowMultipleAllocations
	return map[string]any{
		"device": map[string]any{
			"driver":                   device.Driver,
			"allowMultipleAllocations": multi,
			"attributes":               defaultingMap{Mapper: types.NewStringInterfaceMap(adapter, attributes), fallback: empty},
			"capacity":                 defaultingMap{Mapper: types.NewStringInterfaceMap(adapter, capacity), fallback: empty},
		},
	}, nil
}

// defaultingMap answers lookups of a missing key with an empty map, so that
// an unknown domain behaves like a domain without attributes.
type defaultingMap struct {
	traits.Mapper
	fallback ref.Val
}

func (m defaultingMap) Find(key ref.Val) (ref.Val, bool) {
	if value, found := m.Mapper.Find(key); found {
		return value, true
	}
	return m.fallback, true
}

func splitQualified(name, driver string) (string, string) {
	if domain, id, ok := strings.Cut(name, "/"); ok {
		return domain, id
	}
	return driver, name
}

func attributeValue(attr resourceapi.DeviceAttribute) (any, error) {
	parse := func(s string) (apiservercel.Semver, error) {
		v, err := parseSemver(s)
		return apiservercel.Semver{Version: v}, err
	}
	switch {
	case attr.IntValues != nil:
		return attr.IntValues, nil
	case attr.BoolValues != nil:
		return attr.BoolValues, nil
	case attr.StringValues != nil:
		return attr.StringValues, nil
	case attr.VersionValues != nil:
		out := make([]apiservercel.Semver, len(attr.VersionValues))
		for i, s := range attr.VersionValues {
			v, err := parse(s)
			if err != nil {
				return nil, fmt.Errorf("parse semantic version: %w", err)
			}
			out[i] = v
		}
		return out, nil
	case attr.IntValue != nil:
		return *attr.IntValue, nil
	case attr.BoolValue != nil:
		return *attr.BoolValue, nil
	case attr.StringValue != nil:
		return *attr.StringValue, nil
	case attr.VersionValue != nil:
		v, err := parse(*attr.VersionValue)
		if err != nil {
			return nil, fmt.Errorf("parse semantic version: %w", err)
		}
		return v, nil
	}
	return nil, fmt.Errorf("unsupported attribute value")
}

// celToJSON converts a CEL result into plain JSON plus a type name.
func celToJSON(value ref.Val) (any, string) {
	switch v := value.(type) {
	case types.Bool:
		return bool(v), "bool"
	case types.Int:
		return int64(v), "int"
	case types.Uint:
		return uint64(v), "uint"
	case types.Double:
		f := float64(v)
		switch {
		case math.IsNaN(f):
			return "NaN", "double"
		case math.IsInf(f, 1):
			return "+Inf", "double"
		case math.IsInf(f, -1):
			return "-Inf", "double"
		}
		return f, "double"
	case types.String:
		return string(v), "string"
	case types.Bytes:
		return base64.StdEncoding.EncodeToString([]byte(v)), "bytes"
	case types.Null:
		return nil, "null"
	case apiservercel.Quantity:
		return v.Quantity.String(), "quantity"
	case *apiservercel.Quantity:
		return v.Quantity.String(), "quantity"
	case apiservercel.Semver:
		return v.Version.String(), "semver"
	case *apiservercel.Semver:
		return v.Version.String(), "semver"
	case traits.Lister:
		size := int(v.Size().(types.Int))
		out := make([]any, 0, size)
		for i := 0; i < size; i++ {
			item, _ := celToJSON(v.Get(types.Int(i)))
			out = append(out, item)
		}
		return out, "list"
	case traits.Mapper:
		out := map[string]any{}
		it := v.Iterator()
		for it.HasNext() == types.True {
			key := it.Next()
			keyJSON, _ := celToJSON(key)
			item, _ := celToJSON(v.Get(key))
			out[fmt.Sprint(keyJSON)] = item
		}
		return out, "map"
	}
	// The library's own wrappers, whatever their Go representation.
	switch value.Type().TypeName() {
	case apiservercel.QuantityType.TypeName():
		if q, ok := value.Value().(*resource.Quantity); ok {
			return q.String(), "quantity"
		}
	case apiservercel.SemverType.TypeName():
		if v, ok := value.Value().(semver.Version); ok {
			return v.String(), "semver"
		}
	}
	// Other library types (duration, timestamp, ip, cidr, url, optional,
	// type values): their CEL type name and their string form.
	return fmt.Sprint(value.Value()), value.Type().TypeName()
}

// deviceSizeEstimator gives the cost estimator the declared maximum sizes of
// everything reachable through `device`, mirroring the limits that the DRA
// package declares for its environment (map sizes, name lengths, value
// lengths), for expressions that the selector compiler does not accept.
type deviceSizeEstimator struct {
	root *sizeNode
}

type sizeNode struct {
	max      uint64
	fields   map[string]*sizeNode
	keys     *sizeNode
	values   *sizeNode
	leafMaps bool // a map whose values are attribute values: any name selects them
}

func newDeviceSizeEstimator(listType, multiAlloc bool) *deviceSizeEstimator {
	attrMax := uint64(resourceapi.DeviceAttributeMaxValueLength)
	if listType {
		attrMax = max(attrMax, uint64(resourceapi.ResourceSliceMaxAttributeValuesPerDevice))
	}
	perDevice := uint64(resourceapi.ResourceSliceMaxAttributesAndCapacitiesPerDevice)
	domain := &sizeNode{max: resourceapi.DeviceMaxDomainLength}
	id := &sizeNode{max: resourceapi.DeviceMaxIDLength}
	attr := &sizeNode{max: attrMax}
	quantity := &sizeNode{max: uint64(apiservercel.QuantityDeclType.MaxElements)}
	innerAttrs := &sizeNode{max: perDevice, keys: id, values: attr, leafMaps: true}
	outerAttrs := &sizeNode{max: perDevice, keys: domain, values: innerAttrs}
	innerCap := &sizeNode{max: perDevice, keys: id, values: quantity}
	outerCap := &sizeNode{max: perDevice, keys: domain, values: innerCap}
	fields := map[string]*sizeNode{
		"driver":     {max: resourceapi.DriverNameMaxLength},
		"attributes": outerAttrs,
		"capacity":   outerCap,
	}
	if multiAlloc {
		fields["allowMultipleAllocations"] = &sizeNode{max: 1}
	}
	return &deviceSizeEstimator{root: &sizeNode{fields: fields}}
}

func (s *deviceSizeEstimator) EstimateSize(element checker.AstNode) *checker.SizeEstimate {
	path := element.Path()
	if len(path) == 0 || path[0] != "device" {
		return nil
	}
	node := s.root
	for _, step := range path[1:] {
		var next *sizeNode
		switch step {
		case "@items", "@values":
			next = node.values
		case "@keys":
			next = node.keys
		default:
			if f, ok := node.fields[step]; ok {
				next = f
			} else if node.leafMaps {
				next = node.values
			}
		}
		if next == nil {
			return nil
		}
		node = next
	}
	return &checker.SizeEstimate{Min: 0, Max: node.max}
}

func (s *deviceSizeEstimator) EstimateCallCost(function, overloadID string, target *checker.AstNode, args []checker.AstNode) *checker.CallEstimate {
	return nil
}

// benchResult is what `cel bench` prints.
type benchResult struct {
	Expression     string  `json:"expression"`
	Mode           string  `json:"mode"`
	Devices        int     `json:"devices"`
	Repeat         int     `json:"repeat"`
	Evaluations    int     `json:"evaluations"`
	Matches        int     `json:"matches"`
	Errors         int     `json:"errors"`
	CompileSeconds float64 `json:"compileSeconds"`
	EvalSeconds    float64 `json:"evalSeconds"`
	EvalsPerSecond float64 `json:"evaluationsPerSecond"`
	FirstError     string  `json:"firstError,omitempty"`
}

// benchSelector compiles once and evaluates the selector `repeat` times
// against every device, building the device variables afresh each time
// (DeviceMatches does that), like the allocator's uncached path.
func benchSelector(opts celOptions, expression string, devices []deviceInput, repeat int) (benchResult, error) {
	out := benchResult{Expression: expression, Devices: len(devices), Repeat: repeat}
	ctx := context.Background()
	start := time.Now()
	compiler := cel.GetCompiler(opts.gates.celFeatures())
	compiled := compiler.CompileCELExpression(expression, cel.Options{EnvType: &opts.envType, DisableCostEstimation: true})
	var value *compiledValue
	if compiled.Error != nil {
		if opts.mode == "selector" || !isOutputTypeError(compiled.Error) {
			return out, invalidf("compile: %s", compiled.Error.Error())
		}
		var cerr *celError
		value, cerr = compileValue(opts, expression)
		if cerr != nil {
			return out, invalidf("compile: %s", cerr.Message)
		}
		out.Mode = "value"
	} else {
		out.Mode = "selector"
	}
	out.CompileSeconds = time.Since(start).Seconds()

	celDevices := make([]cel.Device, len(devices))
	for i, d := range devices {
		celDevices[i] = d.celDevice()
	}
	start = time.Now()
	for r := 0; r < repeat; r++ {
		for i := range devices {
			var err error
			var matched bool
			if value == nil {
				matched, _, err = compiled.DeviceMatches(ctx, celDevices[i])
			} else {
				var result ref.Val
				result, _, err = value.eval(ctx, devices[i])
				matched = err == nil && result == types.True
			}
			out.Evaluations++
			if err != nil {
				out.Errors++
				if out.FirstError == "" {
					out.FirstError = err.Error()
				}
			} else if matched {
				out.Matches++
			}
		}
	}
	out.EvalSeconds = time.Since(start).Seconds()
	if out.EvalSeconds > 0 {
		out.EvalsPerSecond = float64(out.Evaluations) / out.EvalSeconds
	}
	return out, nil
}

func parseSemver(s string) (semver.Version, error) {
	return semver.Parse(s)
}
