package main

import (
	"fmt"
	"strings"
)

// flagSpec declares the options one sub-command accepts. Options may appear
// anywhere on the command line (drakit's typer front end allows that too), so
// the standard library's flag package, which stops at the first positional
// argument, is not enough.
type flagSpec struct {
	// values maps every accepted spelling ("-f", "--file") to a canonical name.
	values map[string]string
	// bools maps every spelling of a boolean switch to its canonical name.
	bools map[string]string
}

type parsedArgs struct {
	positional []string
	values     map[string]string
	bools      map[string]bool
}

func (p parsedArgs) get(name, fallback string) string {
	if v, ok := p.values[name]; ok {
		return v
	}
	return fallback
}

func (p parsedArgs) has(name string) bool {
	_, ok := p.values[name]
	return ok
}

// usageError is reported with exit code 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return usageError{msg: fmt.Sprintf(format, args...)}
}

func parseArgs(args []string, spec flagSpec) (parsedArgs, error) {
	out := parsedArgs{values: map[string]string{}, bools: map[string]bool{}}
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			out.positional = append(out.positional, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(arg, "-") || arg == "-" {
			out.positional = append(out.positional, arg)
			continue
		}
		name, inline, hasInline := strings.Cut(arg, "=")
		if canonical, ok := spec.bools[name]; ok {
			value := true
			if hasInline {
				switch strings.ToLower(inline) {
				case "true", "1", "yes":
				case "false", "0", "no":
					value = false
				default:
					return out, usagef("option %s takes true or false, got %q", name, inline)
				}
			}
			out.bools[canonical] = value
			continue
		}
		canonical, ok := spec.values[name]
		if !ok {
			// A leading minus can also start a CEL expression ("-1 < x").
			if looksLikeOption(arg) {
				return out, usagef("unknown option %s", name)
			}
			out.positional = append(out.positional, arg)
			continue
		}
		if hasInline {
			out.values[canonical] = inline
			continue
		}
		if i+1 >= len(args) {
			return out, usagef("option %s needs a value", name)
		}
		i++
		out.values[canonical] = args[i]
	}
	return out, nil
}

func looksLikeOption(arg string) bool {
	trimmed := strings.TrimLeft(arg, "-")
	if trimmed == "" {
		return false
	}
	c := trimmed[0]
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}
