package confidence

import "github.com/mlx-otelcol/mlx-otelcol/proxy/jsonedit"

// fastNumber reads the finite JSON number at b[i:] (strict JSON: no NaN,
// no hex, no leading '+' or '.') and where it ends; not ok for anything
// else, which the generic parser then reads. The result is ParseFloat's to
// the bit: a number of at most 19 significant digits whose decimal
// exponent is within ±22 is an exact integer times or over an exact power
// of ten, and one IEEE multiplication or division rounds that correctly,
// as ParseFloat does (its own first attempt, atof64exact, is this). The
// logprobs engines write are short: Python's repr of a bfloat16
// (-0.0078125, -2.359375) or of a float32 (-0.31725305).
func fastNumber(b []byte, i int) (f float64, end int, ok bool) {
	start := i
	neg := i < len(b) && b[i] == '-'
	if neg {
		i++
	}
	var mant uint64
	nd, exp := 0, 0 // significant digits summed; decimal exponent
	exact := true
	// Integer part: 0 or [1-9][0-9]*.
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			mant, nd, exp, exact = digit(b[i], mant, nd, exp, exact)
		}
	default:
		return 0, 0, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		fs := i
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			mant, nd, exp, exact = digit(b[i], mant, nd, exp, exact)
			exp--
		}
		if i == fs {
			return 0, 0, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		eneg := false
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			eneg = b[i] == '-'
			i++
		}
		es := i
		e := 0
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			if e < 10000 {
				e = e*10 + int(b[i]-'0')
			}
		}
		if i == es {
			return 0, 0, false
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	if i-start > 64 {
		return 0, 0, false // Number refuses these
	}
	if !exact || mant > 1<<53 || exp < -22 || exp > 22 {
		if f, ok = jsonedit.Number(b[start:i]); !ok {
			return 0, 0, false
		}
		return f, i, true
	}
	f = float64(mant)
	if exp < 0 {
		f /= pow10[-exp]
	} else {
		f *= pow10[exp]
	}
	if neg {
		f = -f
	}
	return f, i, true
}

// digit adds a decimal digit to the significand: up to 19 significant
// digits fit a uint64; past them a zero only scales, anything else makes
// the number inexact.
func digit(c byte, mant uint64, nd, exp int, exact bool) (uint64, int, int, bool) {
	switch {
	case nd < 19:
		mant = mant*10 + uint64(c-'0')
		if mant != 0 {
			nd++
		}
	case c != '0':
		exact = false
	default:
		exp++
	}
	return mant, nd, exp, exact
}

// pow10 holds the powers of ten a float64 holds exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}
