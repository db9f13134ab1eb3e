/*
 * git.h - libgit2 at the boundary: the one place its errors become ours
 * (credentials scrubbed out of every message), repositories are opened,
 * revisions parsed and first-parent history walked. The store and the
 * context (context/git.c) are the two modules that use libgit2; both go
 * through this for what they share, so the two cannot drift apart again.
 */
#ifndef TESTFLAME_GIT_H
#define TESTFLAME_GIT_H

#include "testflame/common.h"

#include <git2.h>
#include <git2/sys/commit.h>

/*
 * libgit2 is opened on first use rather than linked (as libcurl is, in
 * net/http.c): it and the 14 libraries it pulls in (Kerberos, mbed TLS,
 * libssh2, PCRE2, OpenSSL's libcrypto, ...) cost every command about
 * 250 page faults and 10 ms of start-up on a VM where a fault costs tens
 * of microseconds: more than `view` takes for a whole run file, which
 * never calls it.
 * Every libgit2 function testflame calls is in this list; below, each
 * name is redefined as the pointer loaded into tf_git_fns(), so callers
 * write plain libgit2 calls. A function missing from the list is a link
 * error ("undefined reference"): add it here.
 */
#define TF_GIT_FUNCTIONS(X) \
	X(git_blob_create_from_buffer) \
	X(git_blob_free) \
	X(git_blob_lookup) \
	X(git_blob_rawcontent) \
	X(git_blob_rawsize) \
	X(git_branch_iterator_free) \
	X(git_branch_iterator_new) \
	X(git_branch_name) \
	X(git_branch_next) \
	X(git_buf_dispose) \
	X(git_checkout_options_init) \
	X(git_checkout_tree) \
	X(git_commit_create_from_ids) \
	X(git_commit_free) \
	X(git_commit_id) \
	X(git_commit_lookup) \
	X(git_commit_parent) \
	X(git_commit_parent_id) \
	X(git_commit_parentcount) \
	X(git_commit_summary) \
	X(git_commit_time) \
	X(git_commit_tree) \
	X(git_commit_tree_id) \
	X(git_config_foreach) \
	X(git_config_free) \
	X(git_config_get_string_buf) \
	X(git_credential_userpass_plaintext_new) \
	X(git_diff_find_options_init) \
	X(git_diff_find_similar) \
	X(git_diff_foreach) \
	X(git_diff_free) \
	X(git_diff_options_init) \
	X(git_diff_status_char) \
	X(git_diff_tree_to_tree) \
	X(git_error_clear) \
	X(git_error_last) \
	X(git_error_set_str) \
	X(git_fetch_options_init) \
	X(git_graph_descendant_of) \
	X(git_libgit2_init) \
	X(git_merge_base) \
	X(git_object_free) \
	X(git_object_id) \
	X(git_object_lookup) \
	X(git_object_peel) \
	X(git_odb_exists) \
	X(git_odb_free) \
	X(git_odb_object_data) \
	X(git_odb_object_free) \
	X(git_odb_object_size) \
	X(git_odb_object_type) \
	X(git_odb_read) \
	X(git_odb_read_header) \
	X(git_odb_write) \
	X(git_oid_cmp) \
	X(git_oid_cpy) \
	X(git_oid_equal) \
	X(git_oid_fromstr) \
	X(git_oid_tostr) \
	X(git_oid_tostr_s) \
	X(git_proxy_options_init) \
	X(git_push_options_init) \
	X(git_reference_create_matching) \
	X(git_reference_delete) \
	X(git_reference_free) \
	X(git_reference_is_branch) \
	X(git_reference_iterator_free) \
	X(git_reference_iterator_glob_new) \
	X(git_reference_lookup) \
	X(git_reference_name) \
	X(git_reference_name_to_id) \
	X(git_reference_next) \
	X(git_reference_next_name) \
	X(git_reference_remove) \
	X(git_reference_shorthand) \
	X(git_reference_symbolic_target) \
	X(git_reference_target) \
	X(git_reference_type) \
	X(git_remote_connect) \
	X(git_remote_connected) \
	X(git_remote_create_anonymous) \
	X(git_remote_disconnect) \
	X(git_remote_download) \
	X(git_remote_free) \
	X(git_remote_init_callbacks) \
	X(git_remote_list) \
	X(git_remote_lookup) \
	X(git_remote_ls) \
	X(git_remote_push) \
	X(git_remote_pushurl) \
	X(git_remote_url) \
	X(git_repository_commondir) \
	X(git_repository_config_snapshot) \
	X(git_repository_free) \
	X(git_repository_head) \
	X(git_repository_head_detached) \
	X(git_repository_is_bare) \
	X(git_repository_is_shallow) \
	X(git_repository_odb) \
	X(git_repository_open_ext) \
	X(git_repository_path) \
	X(git_repository_workdir) \
	X(git_revparse_single) \
	X(git_signature_free) \
	X(git_signature_now) \
	X(git_status_list_entrycount) \
	X(git_status_list_free) \
	X(git_status_list_new) \
	X(git_status_options_init) \
	X(git_tree_create_updated) \
	X(git_tree_entry_byindex) \
	X(git_tree_entry_byname) \
	X(git_tree_entry_bypath) \
	X(git_tree_entry_filemode) \
	X(git_tree_entry_free) \
	X(git_tree_entry_id) \
	X(git_tree_entry_name) \
	X(git_tree_entry_type) \
	X(git_tree_entrycount) \
	X(git_tree_free) \
	X(git_tree_lookup) \
	X(git_treebuilder_free) \
	X(git_treebuilder_insert) \
	X(git_treebuilder_new) \
	X(git_treebuilder_write)

struct tf_git_fns {
#define TF_GIT_FN_PTR(f) __typeof__(f) *f;
	TF_GIT_FUNCTIONS(TF_GIT_FN_PTR)
#undef TF_GIT_FN_PTR
};
/* The loaded functions; the first call loads libgit2 and exits the
 * process with a message when it cannot, as a missing library would
 * have stopped it from starting. */
const struct tf_git_fns *tf_git_fns(void);

#define git_blob_create_from_buffer (tf_git_fns()->git_blob_create_from_buffer)
#define git_blob_free (tf_git_fns()->git_blob_free)
#define git_blob_lookup (tf_git_fns()->git_blob_lookup)
#define git_blob_rawcontent (tf_git_fns()->git_blob_rawcontent)
#define git_blob_rawsize (tf_git_fns()->git_blob_rawsize)
#define git_branch_iterator_free (tf_git_fns()->git_branch_iterator_free)
#define git_branch_iterator_new (tf_git_fns()->git_branch_iterator_new)
#define git_branch_name (tf_git_fns()->git_branch_name)
#define git_branch_next (tf_git_fns()->git_branch_next)
#define git_buf_dispose (tf_git_fns()->git_buf_dispose)
#define git_checkout_options_init (tf_git_fns()->git_checkout_options_init)
#define git_checkout_tree (tf_git_fns()->git_checkout_tree)
#define git_commit_create_from_ids (tf_git_fns()->git_commit_create_from_ids)
#define git_commit_free (tf_git_fns()->git_commit_free)
#define git_commit_id (tf_git_fns()->git_commit_id)
#define git_commit_lookup (tf_git_fns()->git_commit_lookup)
#define git_commit_parent (tf_git_fns()->git_commit_parent)
#define git_commit_parent_id (tf_git_fns()->git_commit_parent_id)
#define git_commit_parentcount (tf_git_fns()->git_commit_parentcount)
#define git_commit_summary (tf_git_fns()->git_commit_summary)
#define git_commit_time (tf_git_fns()->git_commit_time)
#define git_commit_tree (tf_git_fns()->git_commit_tree)
#define git_commit_tree_id (tf_git_fns()->git_commit_tree_id)
#define git_config_foreach (tf_git_fns()->git_config_foreach)
#define git_config_free (tf_git_fns()->git_config_free)
#define git_config_get_string_buf (tf_git_fns()->git_config_get_string_buf)
#define git_credential_userpass_plaintext_new (tf_git_fns()->git_credential_userpass_plaintext_new)
#define git_diff_find_options_init (tf_git_fns()->git_diff_find_options_init)
#define git_diff_find_similar (tf_git_fns()->git_diff_find_similar)
#define git_diff_foreach (tf_git_fns()->git_diff_foreach)
#define git_diff_free (tf_git_fns()->git_diff_free)
#define git_diff_options_init (tf_git_fns()->git_diff_options_init)
#define git_diff_status_char (tf_git_fns()->git_diff_status_char)
#define git_diff_tree_to_tree (tf_git_fns()->git_diff_tree_to_tree)
#define git_error_clear (tf_git_fns()->git_error_clear)
#define git_error_last (tf_git_fns()->git_error_last)
#define git_error_set_str (tf_git_fns()->git_error_set_str)
#define git_fetch_options_init (tf_git_fns()->git_fetch_options_init)
#define git_graph_descendant_of (tf_git_fns()->git_graph_descendant_of)
#define git_libgit2_init (tf_git_fns()->git_libgit2_init)
#define git_merge_base (tf_git_fns()->git_merge_base)
#define git_object_free (tf_git_fns()->git_object_free)
#define git_object_id (tf_git_fns()->git_object_id)
#define git_object_lookup (tf_git_fns()->git_object_lookup)
#define git_object_peel (tf_git_fns()->git_object_peel)
#define git_odb_exists (tf_git_fns()->git_odb_exists)
#define git_odb_free (tf_git_fns()->git_odb_free)
#define git_odb_object_data (tf_git_fns()->git_odb_object_data)
#define git_odb_object_free (tf_git_fns()->git_odb_object_free)
#define git_odb_object_size (tf_git_fns()->git_odb_object_size)
#define git_odb_object_type (tf_git_fns()->git_odb_object_type)
#define git_odb_read (tf_git_fns()->git_odb_read)
#define git_odb_read_header (tf_git_fns()->git_odb_read_header)
#define git_odb_write (tf_git_fns()->git_odb_write)
#define git_oid_cmp (tf_git_fns()->git_oid_cmp)
#define git_oid_cpy (tf_git_fns()->git_oid_cpy)
#define git_oid_equal (tf_git_fns()->git_oid_equal)
#define git_oid_fromstr (tf_git_fns()->git_oid_fromstr)
#define git_oid_tostr (tf_git_fns()->git_oid_tostr)
#define git_oid_tostr_s (tf_git_fns()->git_oid_tostr_s)
#define git_proxy_options_init (tf_git_fns()->git_proxy_options_init)
#define git_push_options_init (tf_git_fns()->git_push_options_init)
#define git_reference_create_matching (tf_git_fns()->git_reference_create_matching)
#define git_reference_delete (tf_git_fns()->git_reference_delete)
#define git_reference_free (tf_git_fns()->git_reference_free)
#define git_reference_is_branch (tf_git_fns()->git_reference_is_branch)
#define git_reference_iterator_free (tf_git_fns()->git_reference_iterator_free)
#define git_reference_iterator_glob_new (tf_git_fns()->git_reference_iterator_glob_new)
#define git_reference_lookup (tf_git_fns()->git_reference_lookup)
#define git_reference_name (tf_git_fns()->git_reference_name)
#define git_reference_name_to_id (tf_git_fns()->git_reference_name_to_id)
#define git_reference_next (tf_git_fns()->git_reference_next)
#define git_reference_next_name (tf_git_fns()->git_reference_next_name)
#define git_reference_remove (tf_git_fns()->git_reference_remove)
#define git_reference_shorthand (tf_git_fns()->git_reference_shorthand)
#define git_reference_symbolic_target (tf_git_fns()->git_reference_symbolic_target)
#define git_reference_target (tf_git_fns()->git_reference_target)
#define git_reference_type (tf_git_fns()->git_reference_type)
#define git_remote_connect (tf_git_fns()->git_remote_connect)
#define git_remote_connected (tf_git_fns()->git_remote_connected)
#define git_remote_create_anonymous (tf_git_fns()->git_remote_create_anonymous)
#define git_remote_disconnect (tf_git_fns()->git_remote_disconnect)
#define git_remote_download (tf_git_fns()->git_remote_download)
#define git_remote_free (tf_git_fns()->git_remote_free)
#define git_remote_init_callbacks (tf_git_fns()->git_remote_init_callbacks)
#define git_remote_list (tf_git_fns()->git_remote_list)
#define git_remote_lookup (tf_git_fns()->git_remote_lookup)
#define git_remote_ls (tf_git_fns()->git_remote_ls)
#define git_remote_push (tf_git_fns()->git_remote_push)
#define git_remote_pushurl (tf_git_fns()->git_remote_pushurl)
#define git_remote_url (tf_git_fns()->git_remote_url)
#define git_repository_commondir (tf_git_fns()->git_repository_commondir)
#define git_repository_config_snapshot (tf_git_fns()->git_repository_config_snapshot)
#define git_repository_free (tf_git_fns()->git_repository_free)
#define git_repository_head (tf_git_fns()->git_repository_head)
#define git_repository_head_detached (tf_git_fns()->git_repository_head_detached)
#define git_repository_is_bare (tf_git_fns()->git_repository_is_bare)
#define git_repository_is_shallow (tf_git_fns()->git_repository_is_shallow)
#define git_repository_odb (tf_git_fns()->git_repository_odb)
#define git_repository_open_ext (tf_git_fns()->git_repository_open_ext)
#define git_repository_path (tf_git_fns()->git_repository_path)
#define git_repository_workdir (tf_git_fns()->git_repository_workdir)
#define git_revparse_single (tf_git_fns()->git_revparse_single)
#define git_signature_free (tf_git_fns()->git_signature_free)
#define git_signature_now (tf_git_fns()->git_signature_now)
#define git_status_list_entrycount (tf_git_fns()->git_status_list_entrycount)
#define git_status_list_free (tf_git_fns()->git_status_list_free)
#define git_status_list_new (tf_git_fns()->git_status_list_new)
#define git_status_options_init (tf_git_fns()->git_status_options_init)
#define git_tree_create_updated (tf_git_fns()->git_tree_create_updated)
#define git_tree_entry_byindex (tf_git_fns()->git_tree_entry_byindex)
#define git_tree_entry_byname (tf_git_fns()->git_tree_entry_byname)
#define git_tree_entry_bypath (tf_git_fns()->git_tree_entry_bypath)
#define git_tree_entry_filemode (tf_git_fns()->git_tree_entry_filemode)
#define git_tree_entry_free (tf_git_fns()->git_tree_entry_free)
#define git_tree_entry_id (tf_git_fns()->git_tree_entry_id)
#define git_tree_entry_name (tf_git_fns()->git_tree_entry_name)
#define git_tree_entry_type (tf_git_fns()->git_tree_entry_type)
#define git_tree_entrycount (tf_git_fns()->git_tree_entrycount)
#define git_tree_free (tf_git_fns()->git_tree_free)
#define git_tree_lookup (tf_git_fns()->git_tree_lookup)
#define git_treebuilder_free (tf_git_fns()->git_treebuilder_free)
#define git_treebuilder_insert (tf_git_fns()->git_treebuilder_insert)
#define git_treebuilder_new (tf_git_fns()->git_treebuilder_new)
#define git_treebuilder_write (tf_git_fns()->git_treebuilder_write)

/* Set libgit2 up, once per process, and leave it up: every init after a
 * full shutdown reloads its TLS certificates, which costs more than the
 * rest of a command's start. */
void tf_git_init(void);

/* TF_* code for a libgit2 error code. */
int tf_git_code(int gitrc);
/*
 * Set the message "<fmt>: <libgit2's last message>", on one line, without
 * a full stop and with credentials scrubbed (both parts), and return
 * `code`, or the code matching `gitrc` when `code` is 0.
 */
int tf_git_error(int gitrc, int code, const char *fmt, ...) TF_PRINTF(3, 4);
/* A copy of `msg` without credentials: the user-info of every URL and the
 * value of every token variable become "***" (caller frees). */
char *tf_git_scrub(const char *msg);

/*
 * Open the repository containing `path` (NULL: the current directory),
 * searching upwards like git. TF_ENOTFOUND outside a repository; TF_EPERM
 * for a repository owned by someone else (the message names the
 * safe.directory fix).
 */
int tf_git_open(git_repository **out, const char *path);

/* Parse a 40-hex id; false if `hex` is not one. */
bool tf_git_parse_id(git_oid *out, const char *hex);
void tf_git_id_hex(char out[GIT_OID_HEXSZ + 1], const git_oid *id);
/* Resolve a revision to a commit id; a full hex id is taken as is, even
 * for a commit this clone lacks (a baseline fetched without its commit). */
int tf_git_rev(git_oid *out, git_repository *repo, const char *rev);

/* Why a first-parent walk ended. */
typedef enum {
	TF_GIT_WALK_STOPPED, /* the callback said so */
	TF_GIT_WALK_MAX,     /* it looked at `max` commits */
	TF_GIT_WALK_ROOT,    /* it reached a commit without parents */
	TF_GIT_WALK_SHALLOW, /* the next parent is not here: a shallow clone's edge */
} tf_git_walk_end;

/* 0 to go on, > 0 to stop (the walk returns 0), < 0 to abort (the walk
 * returns that). */
typedef int (*tf_git_walk_fn)(const git_oid *commit, unsigned distance, void *payload);

/*
 * Walk the first-parent history from `start` (itself first, distance 0),
 * looking at `max` commits at most (0: no limit). TF_ENOTFOUND when
 * `start` is not in the repository; `end` (may be NULL) says why the walk
 * stopped.
 */
int tf_git_walk_first_parent(git_repository *repo, const git_oid *start, unsigned max,
			     tf_git_walk_fn fn, void *payload, tf_git_walk_end *end);

#endif
