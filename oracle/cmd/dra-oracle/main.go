// Command dra-oracle runs the upstream Kubernetes DRA structured allocator
// and the upstream DRA CEL package behind drakit's command line, so that
// drakit's re-implementation can be compared with the real thing.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"
)

const usageText = `dra-oracle: the upstream DRA allocator and CEL behind drakit's command line

usage:
  dra-oracle allocate -f BUNDLE [--node NAME] [--feature-gates G=bool,...] [--allocators auto|NAME,...]
                      [--timeout DURATION] [-o json] [-v]
  dra-oracle allocate-batch [--allocators ...]      (JSON lines on stdin, one result line each)
  dra-oracle cel eval EXPRESSION [--device FILE] [--environment stored|new] [--feature-gates ...]
                      [--mode auto|selector|value] [-o json]
  dra-oracle cel eval-batch                        (JSON lines on stdin, one result line each)
  dra-oracle cel bench EXPRESSION --devices FILE [--repeat N] [--environment ...] [--feature-gates ...]
  dra-oracle bench allocate -f BUNDLE [--feature-gates ...] [--allocators ...] [--resume] [--placements]
                      [--repeat N]

exit codes: 0 ok, 1 invalid input (or CEL error), 2 usage, 3 unsatisfiable, 4 allocation error
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usageText)
		return exitUsage
	}
	var err error
	code := exitOK
	switch args[0] {
	case "allocate":
		code, err = cmdAllocate(args[1:], stdout, stderr)
	case "allocate-batch":
		code, err = cmdAllocateBatch(args[1:], stdin, stdout)
	case "cel":
		if len(args) < 2 {
			err = usagef("cel: expected eval or bench")
			break
		}
		switch args[1] {
		case "eval":
			code, err = cmdCelEval(args[2:], stdout)
		case "bench":
			code, err = cmdCelBench(args[2:], stdout)
		case "eval-batch":
			code, err = cmdCelEvalBatch(args[2:], stdin, stdout)
		default:
			err = usagef("cel: unknown command %q (eval, eval-batch, bench)", args[1])
		}
	case "bench":
		if len(args) < 2 || args[1] != "allocate" {
			err = usagef("bench: expected allocate")
			break
		}
		code, err = cmdBenchAllocate(args[2:], stdout)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usageText)
		return exitOK
	default:
		err = usagef("unknown command %q", args[0])
	}
	if err != nil {
		fmt.Fprintf(stderr, "dra-oracle: %v\n", err)
		switch err.(type) {
		case usageError:
			return exitUsage
		case invalidInput:
			return exitInvalid
		}
		return exitError
	}
	return code
}

func writeJSON(w io.Writer, value any, indent bool) error {
	encoder := json.NewEncoder(w)
	encoder.SetEscapeHTML(false)
	if indent {
		encoder.SetIndent("", "  ")
	}
	return encoder.Encode(value)
}

func checkOutput(p parsedArgs) error {
	if format := p.get("output", "json"); format != "json" {
		return usagef("-o: only json output is supported, got %q", format)
	}
	return nil
}

func parseTimeout(p parsedArgs) (time.Duration, error) {
	spec := p.get("timeout", "")
	if spec == "" {
		return defaultFilterTimeout, nil
	}
	if seconds, err := strconv.ParseFloat(spec, 64); err == nil {
		return time.Duration(seconds * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(spec)
	if err != nil {
		return 0, usagef("--timeout: %v", err)
	}
	return d, nil
}

var allocateFlags = flagSpec{
	values: map[string]string{
		"-f": "file", "--file": "file", "--filename": "file",
		"--node":          "node",
		"--feature-gates": "gates",
		"--allocators":    "allocators",
		"--timeout":       "timeout",
		"-o":              "output", "--output": "output",
	},
	bools: map[string]string{"-v": "verbose", "--verbose": "verbose"},
}

func cmdAllocate(args []string, stdout, stderr io.Writer) (int, error) {
	p, err := parseArgs(args, allocateFlags)
	if err != nil {
		return 0, err
	}
	if len(p.positional) > 0 {
		return 0, usagef("allocate: unexpected argument %q", p.positional[0])
	}
	if !p.has("file") {
		return 0, usagef("allocate: -f BUNDLE is required")
	}
	if err := checkOutput(p); err != nil {
		return 0, err
	}
	g, err := parseGates(p.get("gates", ""))
	if err != nil {
		return 0, err
	}
	allocators, err := parseAllocators(p.get("allocators", ""))
	if err != nil {
		return 0, err
	}
	timeout, err := parseTimeout(p)
	if err != nil {
		return 0, err
	}
	b, err := loadBundleFile(p.get("file", ""))
	if err != nil {
		return 0, err
	}
	result := runAllocate(b, allocateOptions{node: p.get("node", ""), gates: g, timeout: timeout, allocators: allocators})
	if result.exitCode == exitInvalid || result.exitCode == exitUsage {
		if result.exitCode == exitUsage {
			return 0, usageError{msg: result.Message}
		}
		return 0, invalidInput{msg: result.Message}
	}
	if p.bools["verbose"] {
		fmt.Fprintf(stderr, "dra-oracle: allocator %q, gates %s: %s\n", result.Allocator, g, describeOutcome(result))
	} else {
		result.Allocator = ""
	}
	if err := writeJSON(stdout, result, true); err != nil {
		return 0, err
	}
	return result.exitCode, nil
}

// batchRequest is one line of allocate-batch input.
type batchRequest struct {
	ID             json.RawMessage   `json:"id,omitempty"`
	Objects        []json.RawMessage `json:"objects"`
	Node           string            `json:"node,omitempty"`
	FeatureGates   string            `json:"featureGates,omitempty"`
	Allocators     string            `json:"allocators,omitempty"`
	TimeoutSeconds *float64          `json:"timeoutSeconds,omitempty"`
}

type batchResponse struct {
	ID        json.RawMessage `json:"id,omitempty"`
	Status    string          `json:"status"`
	Claims    []any           `json:"claims"`
	Message   string          `json:"message"`
	Allocator string          `json:"allocator,omitempty"`
	ExitCode  int             `json:"exitCode"`
}

var batchFlags = flagSpec{
	values: map[string]string{"--allocators": "allocators", "--feature-gates": "gates"},
}

// cmdAllocateBatch answers one JSON line per input line so that a test
// harness pays the process start-up once for thousands of bundles.
func cmdAllocateBatch(args []string, stdin io.Reader, stdout io.Writer) (int, error) {
	p, err := parseArgs(args, batchFlags)
	if err != nil {
		return 0, err
	}
	if len(p.positional) > 0 {
		return 0, usagef("allocate-batch: unexpected argument %q", p.positional[0])
	}
	defaultAllocators := p.get("allocators", "")
	defaultGates := p.get("gates", "")
	scanner := bufio.NewScanner(stdin)
	scanner.Buffer(make([]byte, 1<<20), 1<<30)
	writer := bufio.NewWriter(stdout)
	defer writer.Flush()
	for scanner.Scan() {
		line := scanner.Bytes()
		if len(line) == 0 {
			continue
		}
		response := answerBatchLine(line, defaultGates, defaultAllocators)
		if err := writeJSON(writer, response, false); err != nil {
			return 0, err
		}
		if err := writer.Flush(); err != nil {
			return 0, err
		}
	}
	if err := scanner.Err(); err != nil {
		return 0, err
	}
	return exitOK, nil
}

func answerBatchLine(line []byte, defaultGates, defaultAllocators string) batchResponse {
	var request batchRequest
	if err := json.Unmarshal(line, &request); err != nil {
		return batchResponse{Status: "invalid", Claims: []any{}, Message: "request: " + err.Error(), ExitCode: exitInvalid}
	}
	fail := func(err error) batchResponse {
		o := failure(err)
		return batchResponse{ID: request.ID, Status: o.Status, Claims: []any{}, Message: o.Message, ExitCode: o.exitCode}
	}
	gateSpec := request.FeatureGates
	if gateSpec == "" {
		gateSpec = defaultGates
	}
	g, err := parseGates(gateSpec)
	if err != nil {
		return fail(err)
	}
	allocatorSpec := request.Allocators
	if allocatorSpec == "" {
		allocatorSpec = defaultAllocators
	}
	allocators, err := parseAllocators(allocatorSpec)
	if err != nil {
		return fail(err)
	}
	timeout := defaultFilterTimeout
	if request.TimeoutSeconds != nil {
		timeout = time.Duration(*request.TimeoutSeconds * float64(time.Second))
	}
	b, err := parseBundle(request.Objects)
	if err != nil {
		return fail(err)
	}
	o := runAllocate(b, allocateOptions{node: request.Node, gates: g, timeout: timeout, allocators: allocators})
	return batchResponse{ID: request.ID, Status: o.Status, Claims: o.Claims, Message: o.Message, Allocator: o.Allocator, ExitCode: o.exitCode}
}

var celFlags = flagSpec{
	values: map[string]string{
		"--device": "device", "--devices": "devices",
		"--environment": "environment", "--env": "environment",
		"--feature-gates": "gates",
		"--mode":          "mode",
		"--repeat":        "repeat",
		"-o":              "output", "--output": "output",
	},
}

func celOptionsFrom(p parsedArgs) (celOptions, error) {
	envType, err := parseEnvironment(p.get("environment", "stored"))
	if err != nil {
		return celOptions{}, err
	}
	g, err := parseGates(p.get("gates", ""))
	if err != nil {
		return celOptions{}, err
	}
	mode := p.get("mode", "auto")
	switch mode {
	case "auto", "selector", "value":
	default:
		return celOptions{}, usagef("--mode must be auto, selector or value, got %q", mode)
	}
	return celOptions{envType: envType, gates: g, mode: mode}, nil
}

func cmdCelEval(args []string, stdout io.Writer) (int, error) {
	p, err := parseArgs(args, celFlags)
	if err != nil {
		return 0, err
	}
	if len(p.positional) != 1 {
		return 0, usagef("cel eval: expected exactly one EXPRESSION argument, got %d", len(p.positional))
	}
	if err := checkOutput(p); err != nil {
		return 0, err
	}
	if p.has("repeat") {
		return cmdCelBench(args, stdout)
	}
	opts, err := celOptionsFrom(p)
	if err != nil {
		return 0, err
	}
	device, err := loadDevice(p.get("device", ""))
	if err != nil {
		return 0, err
	}
	result := evalOnce(opts, p.positional[0], device)
	if err := writeJSON(stdout, result, true); err != nil {
		return 0, err
	}
	if result.Error != nil {
		return exitInvalid, nil
	}
	return exitOK, nil
}

func cmdCelBench(args []string, stdout io.Writer) (int, error) {
	p, err := parseArgs(args, celFlags)
	if err != nil {
		return 0, err
	}
	if len(p.positional) != 1 {
		return 0, usagef("cel bench: expected exactly one EXPRESSION argument, got %d", len(p.positional))
	}
	opts, err := celOptionsFrom(p)
	if err != nil {
		return 0, err
	}
	path := p.get("devices", p.get("device", ""))
	if path == "" {
		return 0, usagef("cel bench: --devices FILE is required")
	}
	repeat := 1000
	if p.has("repeat") {
		repeat, err = strconv.Atoi(p.get("repeat", ""))
		if err != nil || repeat < 1 {
			return 0, usagef("--repeat must be a positive integer")
		}
	}
	devices, err := loadDevices(path)
	if err != nil {
		return 0, err
	}
	result, err := benchSelector(opts, p.positional[0], devices, repeat)
	if err != nil {
		return 0, err
	}
	if err := writeJSON(stdout, result, true); err != nil {
		return 0, err
	}
	return exitOK, nil
}

var benchFlags = flagSpec{
	values: map[string]string{
		"-f": "file", "--file": "file", "--filename": "file",
		"--feature-gates": "gates",
		"--allocators":    "allocators",
		"--repeat":        "repeat",
		"-o":              "output", "--output": "output",
	},
	bools: map[string]string{"--resume": "resume", "--placements": "placements"},
}

func cmdBenchAllocate(args []string, stdout io.Writer) (int, error) {
	p, err := parseArgs(args, benchFlags)
	if err != nil {
		return 0, err
	}
	if !p.has("file") {
		return 0, usagef("bench allocate: -f BUNDLE is required")
	}
	g, err := parseGates(p.get("gates", ""))
	if err != nil {
		return 0, err
	}
	allocators, err := parseAllocators(p.get("allocators", ""))
	if err != nil {
		return 0, err
	}
	b, err := loadBundleFile(p.get("file", ""))
	if err != nil {
		return 0, err
	}
	if len(b.nodes) == 0 {
		return 0, invalidf("bench allocate: the bundle has no Node object")
	}
	repeat := 1
	if p.has("repeat") {
		repeat, err = strconv.Atoi(p.get("repeat", ""))
		if err != nil || repeat < 1 {
			return 0, usagef("--repeat must be a positive integer")
		}
	}
	result := benchAllocate(b, g, allocators, p.bools["resume"], p.bools["placements"], repeat)
	if err := writeJSON(stdout, result, true); err != nil {
		return 0, err
	}
	return exitOK, nil
}

// celBatchRequest is one line of `cel eval-batch` input.
type celBatchRequest struct {
	ID           json.RawMessage `json:"id,omitempty"`
	Expression   string          `json:"expression"`
	Device       json.RawMessage `json:"device,omitempty"`
	Environment  string          `json:"environment,omitempty"`
	FeatureGates string          `json:"featureGates,omitempty"`
	Mode         string          `json:"mode,omitempty"`
}

func cmdCelEvalBatch(args []string, stdin io.Reader, stdout io.Writer) (int, error) {
	if len(args) > 0 {
		return 0, usagef("cel eval-batch: unexpected argument %q", args[0])
	}
	scanner := bufio.NewScanner(stdin)
	scanner.Buffer(make([]byte, 1<<20), 1<<30)
	writer := bufio.NewWriter(stdout)
	defer writer.Flush()
	for scanner.Scan() {
		line := scanner.Bytes()
		if len(line) == 0 {
			continue
		}
		response := answerCelLine(line)
		if err := writeJSON(writer, response, false); err != nil {
			return 0, err
		}
		if err := writer.Flush(); err != nil {
			return 0, err
		}
	}
	return exitOK, scanner.Err()
}

func answerCelLine(line []byte) map[string]any {
	var request celBatchRequest
	fail := func(err error) map[string]any {
		return map[string]any{"id": request.ID, "invalid": err.Error()}
	}
	if err := json.Unmarshal(line, &request); err != nil {
		return fail(err)
	}
	p := parsedArgs{values: map[string]string{}}
	if request.Environment != "" {
		p.values["environment"] = request.Environment
	}
	p.values["gates"] = request.FeatureGates
	if request.Mode != "" {
		p.values["mode"] = request.Mode
	}
	opts, err := celOptionsFrom(p)
	if err != nil {
		return fail(err)
	}
	var device deviceInput
	if len(request.Device) > 0 && string(request.Device) != "null" {
		if err := decodeStrict(request.Device, &device); err != nil {
			return fail(err)
		}
	}
	result := evalOnce(opts, request.Expression, device)
	encoded, err := json.Marshal(result)
	if err != nil {
		return fail(err)
	}
	var out map[string]any
	decoder := json.NewDecoder(bytes.NewReader(encoded))
	decoder.UseNumber()
	if err := decoder.Decode(&out); err != nil {
		return fail(err)
	}
	if len(request.ID) > 0 {
		out["id"] = request.ID
	}
	return out
}
