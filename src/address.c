/*
 * address.c
 *		EVM addresses: parsing, the EIP-55 mixed-case checksum, and the
 *		Keccak-256 hash it rests on.
 *
 * An address is "0x" and 40 hexadecimal digits.  All-lowercase and
 * all-uppercase digits carry no checksum and are accepted as they are; mixed
 * case is a checksum (EIP-55) and must be right, because a wrong one means a
 * typo.  caio stores every address in one form, lowercase, so that 0xAbC...
 * and 0xabc... are one wallet.
 */
#include "postgres.h"

#include "mb/pg_wchar.h"
#include "utils/builtins.h"

#include "caio.h"
#include "address.h"
#include "args.h"

PG_FUNCTION_INFO_V1(caio_address_checksum);

/* ----------------------------------------------------------------
 * Keccak-256 (the original Keccak padding, as Ethereum uses, not SHA-3's)
 * ----------------------------------------------------------------
 */

#define KECCAK_ROUNDS	24
#define KECCAK_RATE		136		/* bytes: 1600 - 2 * 256 bits */

static const uint64 keccak_round_constants[KECCAK_ROUNDS] = {
	UINT64CONST(0x0000000000000001), UINT64CONST(0x0000000000008082),
	UINT64CONST(0x800000000000808A), UINT64CONST(0x8000000080008000),
	UINT64CONST(0x000000000000808B), UINT64CONST(0x0000000080000001),
	UINT64CONST(0x8000000080008081), UINT64CONST(0x8000000000008009),
	UINT64CONST(0x000000000000008A), UINT64CONST(0x0000000000000088),
	UINT64CONST(0x0000000080008009), UINT64CONST(0x000000008000000A),
	UINT64CONST(0x000000008000808B), UINT64CONST(0x800000000000008B),
	UINT64CONST(0x8000000000008089), UINT64CONST(0x8000000000008003),
	UINT64CONST(0x8000000000008002), UINT64CONST(0x8000000000000080),
	UINT64CONST(0x000000000000800A), UINT64CONST(0x800000008000000A),
	UINT64CONST(0x8000000080008081), UINT64CONST(0x8000000000008080),
	UINT64CONST(0x0000000080000001), UINT64CONST(0x8000000080008008)
};

/* Rotation offsets and lane order of the combined rho and pi steps. */
static const int keccak_rho[24] = {
	1, 3, 6, 10, 15, 21, 28, 36, 45, 55, 2, 14,
	27, 41, 56, 8, 25, 43, 62, 18, 39, 61, 20, 44
};
static const int keccak_pi[24] = {
	10, 7, 11, 17, 18, 3, 5, 16, 8, 21, 24, 4,
	15, 23, 19, 13, 12, 2, 20, 14, 22, 9, 6, 1
};

static inline uint64
rotl64(uint64 x, int n)
{
	return (x << n) | (x >> (64 - n));
}

static void
keccak_f1600(uint64 state[25])
{
	for (int round = 0; round < KECCAK_ROUNDS; round++)
	{
		uint64		column[5];
		uint64		carried;

		/* theta */
		for (int x = 0; x < 5; x++)
			column[x] = state[x] ^ state[x + 5] ^ state[x + 10] ^
				state[x + 15] ^ state[x + 20];
		for (int x = 0; x < 5; x++)
		{
			uint64		d = column[(x + 4) % 5] ^ rotl64(column[(x + 1) % 5], 1);

			for (int y = 0; y < 25; y += 5)
				state[y + x] ^= d;
		}

		/* rho and pi */
		carried = state[1];
		for (int i = 0; i < 24; i++)
		{
			int			j = keccak_pi[i];
			uint64		next = state[j];

			state[j] = rotl64(carried, keccak_rho[i]);
			carried = next;
		}

		/* chi */
		for (int y = 0; y < 25; y += 5)
		{
			uint64		row[5];

			for (int x = 0; x < 5; x++)
				row[x] = state[y + x];
			for (int x = 0; x < 5; x++)
				state[y + x] = row[x] ^ (~row[(x + 1) % 5] & row[(x + 2) % 5]);
		}

		/* iota */
		state[0] ^= keccak_round_constants[round];
	}
}

/* Absorb one byte at position pos of the rate (lanes are little-endian). */
static inline void
keccak_absorb_byte(uint64 state[25], int pos, uint8 byte)
{
	state[pos / 8] ^= (uint64) byte << (8 * (pos % 8));
}

void
caio_keccak256(const uint8 *data, size_t len, uint8 digest[32])
{
	uint64		state[25] = {0};
	int			pos = 0;

	for (size_t i = 0; i < len; i++)
	{
		keccak_absorb_byte(state, pos++, data[i]);
		if (pos == KECCAK_RATE)
		{
			keccak_f1600(state);
			pos = 0;
		}
	}
	keccak_absorb_byte(state, pos, 0x01);
	keccak_absorb_byte(state, KECCAK_RATE - 1, 0x80);
	keccak_f1600(state);

	for (int i = 0; i < 32; i++)
		digest[i] = (uint8) (state[i / 8] >> (8 * (i % 8)));
}

/* ----------------------------------------------------------------
 * Addresses
 * ----------------------------------------------------------------
 */

#define ADDRESS_DIGITS 40

/* The EIP-55 form of a lowercase address (canonical and result: 43 bytes). */
static void
address_checksummed(const char *canonical, char *result)
{
	uint8		hash[32];

	caio_keccak256((const uint8 *) canonical + 2, ADDRESS_DIGITS, hash);
	result[0] = '0';
	result[1] = 'x';
	for (int i = 0; i < ADDRESS_DIGITS; i++)
	{
		char		c = canonical[i + 2];
		int			nibble = (hash[i / 2] >> (i % 2 == 0 ? 4 : 0)) & 0x0F;

		result[i + 2] = (char) ((c >= 'a' && c <= 'f' && nibble >= 8) ? c - 'a' + 'A' : c);
	}
	result[ADDRESS_DIGITS + 2] = '\0';
}

/*
 * What an error message quotes of a bad argument: at most
 * CAIO_ECHO_MAX_BYTES of it (cut at a character boundary, marked with
 * "..."), so that a huge argument makes neither a huge message nor a huge
 * log line.
 */
char *
caio_echo(const char *text)
{
	int			cut;

	if (strlen(text) <= CAIO_ECHO_MAX_BYTES)
		return pstrdup(text);
	cut = pg_mbcliplen(text, CAIO_ECHO_MAX_BYTES, CAIO_ECHO_MAX_BYTES);
	return psprintf("%.*s...", cut, text);
}

static void
address_invalid(const char *text, const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
			 errmsg("invalid EVM address: \"%s\"", caio_echo(text)),
			 errdetail("%s", detail)));
}

/*
 * Parse an address into its canonical (lowercase) form; 22P02 for anything
 * that is not "0x" and 40 hex digits, or whose mixed case is a wrong
 * checksum.  "0X" is refused, as ethers and other EIP-55 tools refuse it.
 */
char *
caio_address_parse(const char *text)
{
	char	   *canonical;
	bool		has_lower = false;
	bool		has_upper = false;

	if (strlen(text) != ADDRESS_DIGITS + 2 || text[0] != '0' || text[1] != 'x')
		address_invalid(text, "An EVM address is 0x followed by 40 hexadecimal digits.");

	canonical = palloc(ADDRESS_DIGITS + 3);
	canonical[0] = '0';
	canonical[1] = 'x';
	for (int i = 2; i < ADDRESS_DIGITS + 2; i++)
	{
		char		c = text[i];

		if (c >= 'a' && c <= 'f')
			has_lower = true;
		else if (c >= 'A' && c <= 'F')
			has_upper = true;
		else if (c < '0' || c > '9')
			address_invalid(text, "An EVM address is 0x followed by 40 hexadecimal digits.");
		canonical[i] = (char) ((c >= 'A' && c <= 'F') ? c - 'A' + 'a' : c);
	}
	canonical[ADDRESS_DIGITS + 2] = '\0';

	if (has_lower && has_upper)
	{
		char		checksummed[ADDRESS_DIGITS + 3];

		address_checksummed(canonical, checksummed);
		if (strcmp(checksummed + 2, text + 2) != 0)
			address_invalid(text,
							"A mixed-case address must carry a valid EIP-55 checksum; this one does not, so it may contain a typo.");
	}
	return canonical;
}

/* An address argument, required and parsed. */
char *
caio_arg_address(FunctionCallInfo fcinfo, int argno)
{
	caio_arg_required(fcinfo, argno, "address", NULL);
	return caio_address_parse(text_to_cstring(PG_GETARG_TEXT_PP(argno)));
}

/* caio_address_checksum(address text): the EIP-55 form of an address. */
Datum
caio_address_checksum(PG_FUNCTION_ARGS)
{
	char	   *canonical = caio_arg_address(fcinfo, 0);
	char		checksummed[ADDRESS_DIGITS + 3];

	address_checksummed(canonical, checksummed);
	PG_RETURN_TEXT_P(cstring_to_text(checksummed));
}
