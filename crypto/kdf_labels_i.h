/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kdf_labels_i.h - every HKDF "info" label stackcrypt uses, in one place.
 *
 * Each derived key has exactly one purpose and one label, so no two
 * purposes can ever share key material (fscrypt's rule).  Labels are
 * versioned ("stackcrypt/v1"); a new format gets new labels rather than
 * reinterpreting old ones.  The byte strings are part of the on-disk format
 * (docs/format.md, "Key derivation"): never change one.
 */
#ifndef SC_KDF_LABELS_I_H
#define SC_KDF_LABELS_I_H

/* Volume-wide, from the master key (no salt): keys the header MAC. */
#define SC_LABEL_HEADER_MAC	"stackcrypt/v1 header-mac"
/* Per file, from the master key with salt = the header nonce. */
#define SC_LABEL_DATA_KEY	"stackcrypt/v1 data-key"	/* XTS 64 B, CBC 32 B */
#define SC_LABEL_ESSIV_KEY	"stackcrypt/v1 essiv-key"	/* CBC IV key, 32 B */
#define SC_LABEL_TINY_KEY	"stackcrypt/v1 tiny-key"	/* files < 16 B, 32 B */
/* Volume-wide, from the master key (no salt), only with SC_FEAT_NAMES:
 * AES-256-SIV keys (64 B each) of filenames and of symlink targets. */
#define SC_LABEL_NAMES_KEY	"stackcrypt/v1 names-key"
#define SC_LABEL_SYMLINK_KEY	"stackcrypt/v1 symlink-key"
/* Config: KEK from a key file (salt = config salt), and the KEK check value. */
#define SC_LABEL_KEK		"stackcrypt/v1 kek"
#define SC_LABEL_KEY_CHECK	"stackcrypt/v1 key-check"
/*
 * Version 2 labels: the authenticated format (docs/format.md section 10) and
 * config format 2.  The in-file header MAC key is volume-wide (master key,
 * no salt); the file key is per file (master key, salt = the header's file
 * id).  Config format 2 uses the KEK only as HKDF input: the key that wraps
 * the master key and the check value come from their own labels.
 */
#define SC_LABEL_GCM_HEADER_MAC	"stackcrypt/v2 gcm-header-mac"	/* 32 B, HMAC-SHA256 key */
#define SC_LABEL_GCM_FILE_KEY	"stackcrypt/v2 gcm-file-key"	/* 32 B, AES-256-GCM key */
#define SC_LABEL_KEK_V2		"stackcrypt/v2 kek"		/* key file -> KEK, format 2 */
#define SC_LABEL_WRAP_KEY_V2	"stackcrypt/v2 config-wrap-key"	/* KEK -> 32 B GCM key */
#define SC_LABEL_KEY_CHECK_V2	"stackcrypt/v2 key-check"	/* KEK -> 16 B check value */
/* Volume-wide (master key, no salt): the MAC key of the gcm layer's intent
 * journal records (docs/format.md 10.10), never used for anything else. */
#define SC_LABEL_JOURNAL_MAC	"stackcrypt/v2 journal-mac"	/* 32 B, HMAC-SHA256 key */
/* Volume-wide (master key, no salt), only with SC_FEAT_NAMES: the HMAC-SHA256
 * key of the tags that bind a directory nonce record to its place (9.2). */
#define SC_LABEL_DIRNONCE_TAG	"stackcrypt/v2 dirnonce-tag"	/* 32 B */
/* Volume-wide, only with SC_FEAT_LINKS_BOUND: the HMAC-SHA256 key of the
 * tags that bind a symlink's stored target to its entry (9.5). */
#define SC_LABEL_LINK_TAG	"stackcrypt/v2 link-tag"	/* 32 B */
#define SC_LABEL_CONFIG_AAD_V2	"stackcrypt/v2 config"		/* AAD prefix, format 2 */
/*
 * Version 3 label: config format 3's MAC (docs/format.md section 6), keyed
 * from the master key (no salt) so that whoever holds the master key alone
 * (recovery with 'passwd --masterkey') can check the volume's fields; the
 * password's KEK cannot, and must not be the only authenticator.
 */
#define SC_LABEL_CONFIG_MAC_V3	"stackcrypt/v3 config-mac"	/* 32 B, HMAC-SHA256 key */
/*
 * Version 4 labels: integrity volumes (docs/format.md section 11), all from
 * the master key.  Volume-wide (no salt) unless said: each keys one
 * HMAC-SHA256 use and nothing else.
 */
#define SC_LABEL_INTEG_HEADER_MAC "stackcrypt/v4 integ-header-mac"	/* version 2 file headers */
#define SC_LABEL_INTEG_FILE_KEY	"stackcrypt/v4 integ-file-key"	/* salt = file id: its GCM key */
#define SC_LABEL_ENTRY_TAG	"stackcrypt/v4 entry-tag"	/* place tags, binding records */
#define SC_LABEL_DIRREC_TAG	"stackcrypt/v4 dirrec-tag"	/* version 3 directory records */
#define SC_LABEL_DIR_DIGEST	"stackcrypt/v4 dir-digest"	/* listing digest elements */
#define SC_LABEL_UNIT_TREE	"stackcrypt/v4 unit-tree"	/* unit tree nodes and roots */
#define SC_LABEL_DIRTY_MAC	"stackcrypt/v4 dirty-mac"	/* the journal's dirty table */
#define SC_LABEL_STATE_MAC	"stackcrypt/v4 state-mac"	/* a client's freshness record */
/*
 * Version 4 labels too: config format 4's key slots (docs/format.md 6.4).  Each
 * slot's KEK feeds only these, so a slot's keys never equal a format 2 or 3
 * config's under the same secret and salt; the MAC over the volume's
 * fields and the whole slot table has its own key.
 */
#define SC_LABEL_KEK_V4		"stackcrypt/v4 kek"		/* key file -> KEK */
#define SC_LABEL_WRAP_KEY_V4	"stackcrypt/v4 slot-wrap-key"	/* KEK -> 32 B GCM key */
#define SC_LABEL_KEY_CHECK_V4	"stackcrypt/v4 slot-key-check"	/* KEK -> 16 B check value */
#define SC_LABEL_CONFIG_MAC_V4	"stackcrypt/v4 config-mac"	/* 32 B, HMAC-SHA256 key */
#define SC_LABEL_SLOT_AAD_V4	"stackcrypt/v4 slot"		/* AAD prefix of a slot's wrap */
/*
 * Master-key rotation (stackcrypt rekey, docs/format.md 6.5): the GCM key
 * that wraps the new master key in the rekey state file, from the old one.
 */
#define SC_LABEL_REKEY_STATE	"stackcrypt/v4 rekey-state"	/* 32 B GCM key */
/*
 * Version 5 labels: reverse mode (docs/format.md section 12), from the
 * master key, no salt.  reverse-id keys the HMAC that gives every entry of
 * a plaintext tree its identity and what is derived from it; reverse-nonce
 * keys the HMAC of each unit's synthetic nonce.  Nothing else uses them.
 */
#define SC_LABEL_REVERSE_ID	"stackcrypt/v5 reverse-id"	/* 32 B, HMAC-SHA256 key */
#define SC_LABEL_REVERSE_NONCE	"stackcrypt/v5 reverse-nonce"	/* 32 B, HMAC-SHA256 key */
/* Config: prefix of the GCM associated data (not an HKDF label, but a
 * domain separator of the same family, kept here so all strings are in one place). */
#define SC_LABEL_CONFIG_AAD	"stackcrypt/v1 config"

#endif /* SC_KDF_LABELS_I_H */
