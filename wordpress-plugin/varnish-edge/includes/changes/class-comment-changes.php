<?php
/**
 * Invalidations for comment changes.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * Comments added, edited, (un)approved or deleted: the pages and REST responses showing a post's
 * comments (`c-N`: its page, its comment feed, its REST comments and comment items) and the
 * site-wide comment listings (the comments feed, latest-comments blocks, `/wp/v2/comments`).
 * What takes a comment out of public view (trash, spam, unapprove, delete) and edits (which may
 * remove what someone wanted gone) purge hard; additions soft. Visitors' auto-approved comments
 * go through the rate limit.
 */
class Comment_Changes extends Change_Handler {

	/** @var Rate_Limit Rate limit of cheap wide purges. */
	private $rate_limit;

	/** @var array<int,int> Comments moved to another post in this request: comment id => old post id. */
	private $moved_from = array();

	/**
	 * Constructor.
	 *
	 * @param Settings    $settings   Settings.
	 * @param Event_Queue $queue      The request's queue.
	 * @param Rate_Limit  $rate_limit Rate limit of visitors' comments.
	 */
	public function __construct( Settings $settings, Event_Queue $queue, Rate_Limit $rate_limit ) {
		parent::__construct( $settings, $queue );
		$this->rate_limit = $rate_limit;
	}

	/**
	 * Hook into WordPress.
	 */
	public function register(): void {
		add_action( 'wp_insert_comment', array( $this, 'on_comment_inserted' ), 10, 2 );
		add_action( 'transition_comment_status', array( $this, 'on_comment_status' ), 10, 3 );
		add_filter( 'wp_update_comment_data', array( $this, 'on_comment_updating' ), 10, 2 );
		add_action( 'edit_comment', array( $this, 'on_comment_edited' ), 10, 1 );
		add_action( 'delete_comment', array( $this, 'on_comment_deleted' ), 10, 2 );
	}

	/**
	 * Invalidate the pages showing a post's comments and the comment feeds.
	 *
	 * @param int    $post_id Post id.
	 * @param string $reason  Reason.
	 * @param bool   $soft    Soft purge (additions) or hard (removals).
	 */
	private function comments_changed( int $post_id, string $reason, bool $soft ): void {
		$post = get_post( $post_id );
		if ( ! $post || 'publish' !== $post->post_status ) {
			return;
		}
		$s = $this->scheme();
		$this->queue( ( new Invalidation() )->tags( array( $s->comments( $post_id ), $s->listing( 'comments' ) ), $soft )->reason( $reason ) );
	}

	/**
	 * Action `wp_insert_comment`.
	 */
	public function on_comment_inserted( int $id, \WP_Comment $comment ): void {
		if ( '1' !== (string) $comment->comment_approved ) {
			return;
		}
		if ( ! current_user_can( 'moderate_comments' ) ) {
			// Anyone can post an auto-approved comment: its (soft) purge of the post and of every
			// page showing recent comments goes out at most once per window per key, the rest
			// at the window's end.
			$post = get_post( (int) $comment->comment_post_ID );
			if ( $post && 'publish' === $post->post_status ) {
				$s = $this->scheme();
				$this->rate_limit->add( array( $s->comments( (int) $post->ID ), $s->listing( 'comments' ) ), true, sprintf( 'comment %d added', $id ) );
			}
			return;
		}
		$this->comments_changed( (int) $comment->comment_post_ID, sprintf( 'comment %d added', $id ), true );
	}

	/**
	 * Action `transition_comment_status`.
	 */
	public function on_comment_status( string $new_status, string $old_status, \WP_Comment $comment ): void {
		if ( 'approved' === $new_status || 'approved' === $old_status ) {
			$this->comments_changed( (int) $comment->comment_post_ID, sprintf( 'comment %d %s', (int) $comment->comment_ID, $new_status ), 'approved' === $new_status );
		}
	}

	/**
	 * Filter `wp_update_comment_data` (before the update): note a comment moved to another post.
	 *
	 * @param array|\WP_Error $data    New comment data (returned unchanged).
	 * @param array           $comment Comment as it was.
	 */
	public function on_comment_updating( array|\WP_Error $data, array $comment = array() ): array|\WP_Error {
		if ( is_array( $data ) && is_array( $comment ) && isset( $data['comment_post_ID'], $comment['comment_post_ID'], $comment['comment_ID'] )
			&& (int) $data['comment_post_ID'] !== (int) $comment['comment_post_ID'] && '1' === (string) ( $comment['comment_approved'] ?? '' ) ) {
			$this->moved_from[ (int) $comment['comment_ID'] ] = (int) $comment['comment_post_ID'];
		}
		return $data;
	}

	/**
	 * Action `edit_comment`: hard, an edit may remove what someone wanted gone; a comment moved
	 * to another post leaves the old post's pages too.
	 */
	public function on_comment_edited( int $id ): void {
		$comment = get_comment( $id );
		if ( isset( $this->moved_from[ $id ] ) ) {
			$this->comments_changed( $this->moved_from[ $id ], sprintf( 'comment %d moved to another post', $id ), false );
			unset( $this->moved_from[ $id ] );
		}
		if ( $comment && '1' === (string) $comment->comment_approved ) {
			$this->comments_changed( (int) $comment->comment_post_ID, sprintf( 'comment %d edited', $id ), false );
		}
	}

	/**
	 * Action `delete_comment` (before the row goes).
	 */
	public function on_comment_deleted( int $id, ?\WP_Comment $comment = null ): void {
		$comment = $comment instanceof \WP_Comment ? $comment : get_comment( $id );
		if ( $comment && '1' === (string) $comment->comment_approved ) {
			$this->comments_changed( (int) $comment->comment_post_ID, sprintf( 'comment %d deleted', $id ), false );
		}
	}
}
