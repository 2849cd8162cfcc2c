<?php
/**
 * Invalidations for attachment changes.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * Attachments: edits (title, caption, alt text, description), rewritten files and deletions purge
 * what shows them (`e-N`), their REST items and their file URLs; new uploads purge only the REST
 * media listings, which list the newest attachments.
 */
class Media_Changes extends Change_Handler {

	/**
	 * Attachment meta shown on pages: alt text and the file.
	 */
	const ATTACHMENT_META = array( '_wp_attachment_image_alt', '_wp_attached_file', '_wp_attachment_metadata' );

	/** @var array<int,string[]|null> File URLs of attachments before the request rewrote their metadata (null: it had none). */
	private $media_before = array();

	/** @var array<int,bool> Attachments created in this request (nothing cached can show them). */
	private $new_attachments = array();

	/** @var array<int,string> Attachments whose alt text or file meta changed in this request (first key). */
	private $attachment_meta = array();

	/**
	 * Hook into WordPress.
	 */
	public function register(): void {
		add_action( 'attachment_updated', array( $this, 'on_attachment_changed' ), 10, 1 );
		add_action( 'delete_attachment', array( $this, 'on_attachment_deleted' ), 10, 1 );
		add_action( 'add_attachment', array( $this, 'on_attachment_added' ), 10, 1 );
		foreach ( array( 'added', 'updated', 'deleted' ) as $op ) {
			add_action( "{$op}_post_meta", array( $this, 'on_attachment_meta' ), 10, 3 );
		}
		add_filter( 'wp_update_attachment_metadata', array( $this, 'on_attachment_metadata' ), 10, 2 );
	}

	/**
	 * Action `attachment_updated`: the attachment page and every published post that embeds it.
	 */
	public function on_attachment_changed( int $attachment_id ): void {
		$this->queue( $this->attachment_shown( $attachment_id, sprintf( 'attachment %d changed', $attachment_id ) ) );
	}

	/**
	 * Action `add_attachment`: created in this request, so no cached page can show it yet; the
	 * REST media listings (the newest first) gain it.
	 */
	public function on_attachment_added( int $attachment_id ): void {
		$this->new_attachments[ $attachment_id ] = true;
		$this->queue( ( new Invalidation() )->tags( $this->scheme()->rest_lists( Rest_Bases::of_type( 'attachment' ) ), true )->reason( sprintf( 'attachment %d added', $attachment_id ) ) );
		$this->queue->after_commit(
			function () use ( $attachment_id ): void {
				unset( $this->new_attachments[ $attachment_id ] );
			}
		);
	}

	/**
	 * Actions `added_post_meta` / `updated_post_meta` / `deleted_post_meta`: an attachment's alt
	 * text or file changed (also when written without an attachment update, as the media
	 * modal and the REST API write alt text).
	 *
	 * @param int|int[] $meta_id   Meta id (several when deleted).
	 * @param int       $object_id Post id.
	 * @param string    $meta_key  Meta key.
	 */
	public function on_attachment_meta( int|array $meta_id, int $object_id, string $meta_key ): void {
		if ( ! in_array( $meta_key, self::ATTACHMENT_META, true ) || isset( $this->attachment_meta[ $object_id ] ) || 'attachment' !== get_post_type( $object_id ) ) {
			return;
		}
		$this->attachment_meta[ $object_id ] = $meta_key;
		// Decided at the end of the request: WordPress writes the file meta of a new upload
		// before `add_attachment` says it is new.
		$this->queue->defer(
			function () use ( $object_id ): void {
				$key = $this->attachment_meta[ $object_id ] ?? '';
				unset( $this->attachment_meta[ $object_id ] );
				if ( ! isset( $this->new_attachments[ $object_id ] ) && 'attachment' === get_post_type( $object_id ) ) {
					$this->queue( $this->attachment_shown( $object_id, sprintf( 'attachment %d changed (%s)', $object_id, $key ) ) );
				}
			}
		);
	}

	/**
	 * Action `delete_attachment`: fires before `wp_delete_attachment()` deletes the meta and the
	 * files, so the metadata still names every file. Besides what shows the attachment, every file
	 * URL is purged: static files are cached for days, and a deleted image (a takedown) must stop
	 * being served now.
	 */
	public function on_attachment_deleted( int $attachment_id ): void {
		$files = Attachment_Files::urls( $attachment_id, wp_get_attachment_metadata( $attachment_id ), get_post_meta( $attachment_id, '_wp_attachment_backup_sizes', true ) );
		$this->queue( $this->attachment_shown( $attachment_id, sprintf( 'attachment %d deleted', $attachment_id ) )->urls( $files )->tags( $this->scheme()->rest_lists( Rest_Bases::of_type( 'attachment' ) ) ) );
	}

	/**
	 * Filter `wp_update_attachment_metadata` (before the metadata is saved): image editor, size
	 * regeneration, upload processing. Remembers the file URLs of the metadata as it was before
	 * the request's first write; the end of the request compares them with the saved metadata
	 * (`attachment_files_changed()`), once however often it was written (WordPress writes it
	 * once per generated size) and with what the later filters made of it.
	 *
	 * @param mixed $data          New metadata (returned unchanged).
	 * @param int   $attachment_id Attachment id.
	 */
	public function on_attachment_metadata( mixed $data, int $attachment_id = 0 ): mixed {
		if ( $attachment_id <= 0 || array_key_exists( $attachment_id, $this->media_before ) || 'attachment' !== get_post_type( $attachment_id ) ) {
			return $data;
		}
		$old = wp_get_attachment_metadata( $attachment_id );

		$this->media_before[ $attachment_id ] = $old ? Attachment_Files::urls( $attachment_id, $old ) : null;
		$this->queue->defer(
			function () use ( $attachment_id ): void {
				$this->attachment_files_changed( $attachment_id );
			}
		);
		return $data;
	}

	/**
	 * End of a request that rewrote an attachment's metadata: purge the file URLs of the old and
	 * of the new metadata (with `IMAGE_EDIT_OVERWRITE` the names stay and the pixels change;
	 * without it, pages computing URLs from the metadata show the new names), the attachment page
	 * and the posts embedding it.
	 */
	private function attachment_files_changed( int $attachment_id ): void {
		$before = $this->media_before[ $attachment_id ] ?? null;
		unset( $this->media_before[ $attachment_id ] );
		if ( 'attachment' !== get_post_type( $attachment_id ) ) {
			// Deleted later in the request: `on_attachment_deleted()` purged its pages and files
			// as they were then; the files it had before are left.
			if ( $before ) {
				$this->queue( ( new Invalidation() )->urls( $before )->reason( sprintf( 'attachment %d deleted', $attachment_id ) ) );
			}
			return;
		}
		if ( null === $before && isset( $this->new_attachments[ $attachment_id ] ) ) {
			// A new upload: created in this request, its sizes generated now under file names
			// WordPress just made unique. Nothing cached can show these files or the attachment;
			// purging would send a webhook per upload for nothing. (A repaired upload of an
			// older attachment is purged.)
			return;
		}
		$after = Attachment_Files::urls( $attachment_id, wp_get_attachment_metadata( $attachment_id ) );
		$this->queue( $this->attachment_shown( $attachment_id, sprintf( 'attachment %d files changed', $attachment_id ) )->urls( array_merge( (array) $before, $after ) ) );
	}

	/**
	 * Invalidation of what shows an attachment, hard (an alt text or caption correction may be a
	 * removal): its page, its REST item, and every page that rendered it, which carries its
	 * `e-N` key (image, gallery item, featured image, image block) — one key purge instead of a
	 * search through the posts.
	 */
	private function attachment_shown( int $attachment_id, string $reason ): Invalidation {
		$s    = $this->scheme();
		$inv  = ( new Invalidation() )->tags( array( $s->post( $attachment_id ), $s->rest_post( $attachment_id ), $s->embedded( $attachment_id ), $s->rest_query( Rest_Bases::of_type( 'attachment' ) ) ) )->reason( $reason );
		$link = get_permalink( $attachment_id );
		if ( is_string( $link ) ) {
			$inv->urls( array( $link ) );
		}
		return $inv;
	}
}
